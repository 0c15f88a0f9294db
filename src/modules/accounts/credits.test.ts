import { describe, expect } from 'vitest'
import { createTenant } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { creditBalance, grantCredits, InsufficientBalance, reserveCredits } from './credits.service.js'

describe('credits', () => {
  test('never overdraws under 50 concurrent reservations', async ({ t }) => {
    const { db } = t.app.platform
    const { accountId } = await createTenant(t.app)
    await grantCredits(db, accountId, 10)
    const results = await Promise.allSettled(
      Array.from({ length: 50 }, (_, i) => reserveCredits(db, accountId, 'email', 1, `send-${i}`)),
    )
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(10)
    const refused = results.filter((r) => r.status === 'rejected')
    expect(refused).toHaveLength(40)
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(InsufficientBalance)
    expect(await creditBalance(db, accountId)).toBe(0)
  })

  test('reports what was required and what was available', async ({ t }) => {
    const { db } = t.app.platform
    const { accountId } = await createTenant(t.app)
    await grantCredits(db, accountId, 2)
    const error = await reserveCredits(db, accountId, 'email', 3).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(InsufficientBalance)
    expect(error).toMatchObject({
      statusCode: 400,
      message: 'Insufficient balance',
      additionalInfo: { required: 3, available: 2 },
    })
    expect(await creditBalance(db, accountId)).toBe(2)
  })

  test('charges a reference once', async ({ t }) => {
    const { db } = t.app.platform
    const { accountId } = await createTenant(t.app)
    await grantCredits(db, accountId, 5)
    expect(await reserveCredits(db, accountId, 'email', 2, 'msg-1')).toEqual({ balance: 3, applied: true })
    expect(await reserveCredits(db, accountId, 'email', 2, 'msg-1')).toEqual({ balance: 3, applied: false })
  })

  test('reserves nothing from an account without a balance', async ({ t }) => {
    const { db } = t.app.platform
    const { accountId } = await createTenant(t.app)
    await expect(reserveCredits(db, accountId, 'email', 1)).rejects.toMatchObject({
      additionalInfo: { required: 1, available: 0 },
    })
  })
})
