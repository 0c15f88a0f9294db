import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import type { Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { expectOnlyOwnerSees, reviewingTenant, waitForRequests } from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'

const statsOf = async (t: TestApp, tenant: Tenant, query = '') => {
  const response = await t.app.inject({ url: `/v1/reviews/stats?${query}`, headers: tenant.headers })
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data
}

/** The tenant reports a service delivered to the customer at `email`. */
const served = (t: TestApp, tenant: Tenant, email: string) =>
  t.app.inject({
    method: 'POST',
    url: '/reviews/events',
    headers: tenant.headers,
    payload: { trigger: 'service_delivered', event_id: email, customer: { email } },
  })

/** The whole UTC day of `time` as a stats period: answered from the daily roll-up alone. */
const wholeDayOf = (time: Date) => {
  const from = `${time.toISOString().slice(0, 10)}T00:00:00.000Z`
  return `from=${from}&to=${new Date(Date.parse(from) + 86_400_000).toISOString()}`
}

/** The tracked-link codes of the mail the tenant sent. */
async function sentCodes(t: TestApp, tenant: Tenant): Promise<string[]> {
  const mail = await t.app.inject({ url: '/v1/e/mailprovider/communications', headers: tenant.headers })
  return [...JSON.stringify(mail.json().data).matchAll(/\/r\/([A-Za-z0-9_-]{12})/g)].map(
    (m) => m[1] as string,
  )
}

describe('GET /reviews/stats', () => {
  test('counts per platform and per day: sent, clicked, skipped by reason, and the click-through rate', async ({
    t,
    stranger,
  }) => {
    // Google has a review link, Yelp none: each customer gets a sent Google request and a skipped Yelp one.
    const tenant = await reviewingTenant(t, {
      trigger: 'service_delivered',
      delay_hours: 0,
      platforms: ['google', 'yelp'],
    })
    for (const email of ['one@example.com', 'two@example.com'])
      expect((await served(t, tenant, email)).statusCode).toBe(202)
    await waitForRequests(t, tenant, 2, 'status=sent')
    await waitForRequests(t, tenant, 2, 'status=skipped')
    // The same customer again within 30 days: Google is skipped by the limit; Yelp's skipped request held no
    // place in it, so Yelp is asked again, and skipped again for want of a link.
    await served(t, tenant, 'ONE@example.com')
    await eventually(async () =>
      expect((await statsOf(t, tenant)).totals).toMatchObject({ requested: 6, scheduled: 0 }),
    )
    const [code] = await sentCodes(t, tenant)
    await t.app.inject({
      url: `/r/${code}`,
      headers: { 'user-agent': 'Mozilla/5.0 (Macintosh) Safari/605.1' },
    })

    const stats = await statsOf(t, tenant)
    expect(stats.totals).toEqual({
      requested: 6,
      scheduled: 0,
      sent: 2,
      clicked: 1,
      skipped: 4,
      skipped_by_reason: { no_review_link: 3, frequency_limit: 1 },
      failed: 0,
      cancelled: 0,
      click_through_rate: 0.5,
    })
    expect(stats.by_platform).toEqual([
      expect.objectContaining({
        platform: 'google',
        requested: 3,
        sent: 2,
        clicked: 1,
        click_through_rate: 0.5,
      }),
      expect.objectContaining({
        platform: 'yelp',
        requested: 3,
        sent: 0,
        skipped_by_reason: { no_review_link: 3 },
        click_through_rate: 0,
      }),
    ])
    const today = new Date().toISOString().slice(0, 10)
    expect(stats.by_day).toEqual([expect.objectContaining({ date: today, requested: 6, clicked: 1 })])
    // The same counts for today's whole day, which the daily roll-up answers alone.
    const { from: _from, to: _to, ...counted } = stats
    expect(await statsOf(t, tenant, wholeDayOf(new Date()))).toMatchObject(counted)

    const later = await statsOf(
      t,
      tenant,
      `from=${new Date(Date.now() + 60_000).toISOString()}&to=${new Date(Date.now() + 120_000).toISOString()}`,
    )
    expect(later).toMatchObject({ totals: { requested: 0 }, by_platform: [], by_day: [] })
    // Another account counts none of the tenant's requests: no platform of theirs.
    await expectOnlyOwnerSees(
      t,
      { method: 'GET', url: '/reviews/stats' },
      tenant,
      stranger,
      '"platform":"google"',
    )
    expect((await statsOf(t, stranger)).totals.requested).toBe(0)
  })

  test('whole days come from the daily roll-up, kept by every write: a cancelled request moves from scheduled to cancelled', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered', delay_hours: 2 })
    for (const email of ['one@example.com', 'two@example.com'])
      expect((await served(t, tenant, email)).statusCode).toBe(202)
    const [request] = await waitForRequests(t, tenant, 2, 'status=scheduled')
    const today = wholeDayOf(new Date(request?.created_at as string))
    expect((await statsOf(t, tenant, today)).totals).toMatchObject({
      requested: 2,
      scheduled: 2,
      cancelled: 0,
    })

    const cancelled = await t.app.inject({
      method: 'POST',
      url: `/reviews/requests/${request?._id}/cancel`,
      headers: tenant.headers,
    })
    expect(cancelled.statusCode).toBe(200)
    const stats = await statsOf(t, tenant, today)
    expect(stats.totals).toMatchObject({ requested: 2, scheduled: 1, cancelled: 1, sent: 0 })
    expect(stats.by_platform).toEqual([
      expect.objectContaining({ platform: 'google', requested: 2, scheduled: 1, cancelled: 1 }),
    ])
    // A period that does not start at midnight reads its first hours from the requests: the same counts.
    const sinceAnHourAgo = `from=${new Date(Date.now() - 3_600_000).toISOString()}`
    expect((await statsOf(t, tenant, sinceAnHourAgo)).totals).toEqual(stats.totals)
  })

  test('refuses a reversed or over-long period, and a malformed time', async ({ t, owner }) => {
    const ask = (query: string) => t.app.inject({ url: `/reviews/stats?${query}`, headers: owner.headers })
    const reversed = await ask('from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z')
    expect(reversed.statusCode).toBe(400)
    expect(reversed.json().message).toBe('from must be before to')
    expect((await ask('from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z')).statusCode).toBe(400)
    const malformed = await ask('from=yesterday')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json().message).toContain('from')
    expect((await t.app.inject({ url: '/reviews/stats' })).statusCode).toBe(401)
  })
})
