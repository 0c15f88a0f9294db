import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { createTenant } from '../../../test/helpers/fixtures.js'
import { fourByteText, MEGABYTE, randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { CREDIT_REFERENCE_MAX_LENGTH } from './credits.schemas.js'
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

  // A megabyte reference reached the ledger's unique index, which refused it (PostgreSQL 54000): a 500.
  test('refuses a reference longer than the ledger keeps, naming it, and applies the longest once', async ({
    t,
  }) => {
    const { accountId } = await createTenant(t.app)
    const grant = (reference: string) =>
      t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${accountId}/credits`,
        headers: adminHeaders,
        payload: { amount: 1, reference },
      })
    const long = await grant(randomText(MEGABYTE))
    expect(long.statusCode).toBe(400)
    expect(long.json().message).toBe(
      `reference must be at most ${CREDIT_REFERENCE_MAX_LENGTH} characters long`,
    )
    const longest = fourByteText(CREDIT_REFERENCE_MAX_LENGTH)
    expect((await grant(longest)).json().data.balance).toBe(1)
    expect((await grant(longest)).json().data.balance).toBe(1)
  })
})
