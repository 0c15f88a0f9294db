import { describe, expect, it } from 'vitest'
import { FETCH_LOOPS, groupConcurrencyOf, jobAccountOf } from './fair-share.js'

describe("an account's share of a queue's workers", () => {
  it('is its percentage of the capacity, weighed by its tier, at least one job and never the whole', () => {
    expect(FETCH_LOOPS).toBe(2)
    // pg-boss's groupConcurrency: `default` for a job without a tier (or an unlisted one), `tiers` by its tier.
    expect(groupConcurrencyOf(8, { percent: 50, tiers: { basic: 25, pro: 50, enterprise: 75 } })).toEqual({
      default: 4,
      tiers: { basic: 2, pro: 4, enterprise: 6 },
    })
    expect(groupConcurrencyOf(2, { percent: 50, tiers: {} })).toEqual({ default: 1 })
    expect(groupConcurrencyOf(2, { percent: 100, tiers: { enterprise: 1 } })).toEqual({
      default: 1,
      tiers: { enterprise: 1 },
    })
    expect(groupConcurrencyOf(64, { percent: 100, tiers: {} })).toEqual({ default: 63 })
  })

  it("takes an event's account only when it is an account id, so that a forged one makes no group", () => {
    expect(jobAccountOf('0123456789abcdef01234567')).toEqual({ id: '0123456789abcdef01234567' })
    for (const value of [undefined, null, 42, '', 'acct_1', `${'a'.repeat(24)}x`, '0123456789ABCDEF01234567'])
      expect(jobAccountOf(value)).toBeNull()
  })
})
