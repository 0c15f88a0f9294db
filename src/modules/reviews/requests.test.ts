import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  expectYearZeroCursorRefused,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import {
  expectOnlyOwnerSees,
  insertedId,
  insertReviewEvents,
  requestsOf,
  reviewingTenant,
  waitForRequests,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'

let sequence = 0
/** Reports a service delivered to a customer (`POST /reviews/events`); the event's `event_id`. */
async function serviceDelivered(t: TestApp, tenant: Tenant, customer: { email?: string; phone?: string }) {
  const event_id = `visit-${++sequence}`
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/events',
    headers: tenant.headers,
    payload: { trigger: 'service_delivered', event_id, customer: { name: 'Ada', ...customer } },
  })
  expect(response.statusCode).toBe(202)
  return event_id
}

/** A tenant asking for reviews on Google and Yelp `delay_hours` after a service delivered. */
const servingTenant = (t: TestApp) =>
  reviewingTenant(t, { trigger: 'service_delivered', platforms: ['google', 'yelp'], send_method: 'both' })

describe('GET /reviews/requests', () => {
  test('lists the requests newest first, by status, platform, customer and creation time, and pages', async ({
    t,
  }) => {
    const tenant = await servingTenant(t)
    await serviceDelivered(t, tenant, { email: 'First@Example.com' })
    const [, firstGoogle] = await waitForRequests(t, tenant, 2)
    await serviceDelivered(t, tenant, { phone: '+14155550123' })
    const all = await waitForRequests(t, tenant, 4)
    expect(all.map((request) => request.customer.email ?? request.customer.phone)).toEqual([
      '+14155550123',
      '+14155550123',
      'First@Example.com',
      'First@Example.com',
    ])
    const cancelled = await t.app.inject({
      method: 'POST',
      url: `/reviews/requests/${firstGoogle?._id}/cancel`,
      headers: tenant.headers,
    })
    expect(cancelled.statusCode).toBe(200)

    const platformsOf = async (query: string) =>
      (await requestsOf(t, tenant, query)).map((request) => `${request.platform} ${request.status}`)
    expect(await platformsOf('status=cancelled')).toEqual(['google cancelled'])
    expect(await platformsOf('platform=yelp')).toEqual(['yelp scheduled', 'yelp scheduled'])
    // A customer is found by their email in any case, or their phone in any format.
    expect(await platformsOf('customer=first%40example.com&status=scheduled')).toEqual(['yelp scheduled'])
    expect(await platformsOf('customer=%2B1%20(415)%20555-0123&platform=google')).toEqual([
      'google scheduled',
    ])
    // The API's times are in milliseconds: the first event's requests were created within theirs.
    const firstEnd = new Date(Date.parse(all[2]?.created_at as string) + 1).toISOString()
    expect((await requestsOf(t, tenant, `to=${firstEnd}`)).map((request) => request._id)).toEqual(
      all.slice(2).map((request) => request._id),
    )
    expect(await requestsOf(t, tenant, `from=${firstEnd}`)).toEqual(all.slice(0, 2))
    const page = await t.app.inject({ url: '/v1/reviews/requests?limit=3&page=2', headers: tenant.headers })
    expect(page.json()).toMatchObject({
      data: [{ _id: all[3]?._id }],
      pagination: { total: 4, page: 2, limit: 3, pages: 2 },
    })
    for (const query of ['status=lost', 'platform=myspace', 'from=yesterday', 'limit=101']) {
      const refused = await t.app.inject({ url: `/reviews/requests?${query}`, headers: tenant.headers })
      expect(refused.statusCode, query).toBe(400)
      expect(refused.json().message).toContain(query.split('=')[0])
    }
  })

  test('walks the requests with cursors, a filter kept; counts up to the cap', async ({ t }) => {
    const tenant = await servingTenant(t)
    await insertReviewEvents(t, '00b0', 1, tenant.accountId)
    const event = insertedId('00b0', 1)
    // Pairs share a microsecond-precise time; every third is on Yelp.
    const insert = (prefix: string, count: number) =>
      t.app.platform.db.execute(sql`insert into review_requests (id, account_id, parent_account, event_id,
          source_ref, customer_key, platform, send_method, code, scheduled_for, created_at)
        select ${prefix} || lpad(to_hex(n), 20, '0'), ${tenant.accountId}, ${tenant.accountId}, ${event},
          ${prefix} || '-' || n, 'c' || n || '@example.com', case when n % 3 = 0 then 'yelp' else 'google' end,
          'email', ${prefix} || n, now(), timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'
        from generate_series(1, ${count}::int) as n`)
    await insert('00b1', 20)
    const newestFirst = Array.from({ length: 20 }, (_, i) => 20 - i)
    await expectCursorWalk(
      t.app,
      '/reviews/requests',
      tenant.headers,
      newestFirst.map((n) => insertedId('00b1', n)),
      async () => {
        await serviceDelivered(t, tenant, { email: 'newer@example.com' })
        await waitForRequests(t, tenant, 2, 'customer=newer%40example.com')
      },
    )
    expect(
      await walkWithCursors(
        t.app,
        '/reviews/requests?platform=yelp&to=2026-01-01T00:00:00Z',
        tenant.headers,
        2,
      ),
    ).toEqual(newestFirst.filter((n) => n % 3 === 0).map((n) => insertedId('00b1', n)))
    await expectListRefusals(t.app, '/reviews/requests', tenant.headers, 100)
    await expectYearZeroCursorRefused(t.app, '/reviews/requests', tenant.headers, 'review_requests')
    await insert('00b2', LIST_TOTAL_CAP)
    await expectCappedTotal(t.app, '/reviews/requests', tenant.headers, 100)
  })

  test("lists only the account's own requests", async ({ t, stranger }) => {
    const tenant = await servingTenant(t)
    await serviceDelivered(t, tenant, { email: 'mine@example.com' })
    const [request] = await waitForRequests(t, tenant, 2)
    const list = { method: 'GET' as const, url: '/reviews/requests' }
    await expectOnlyOwnerSees(t, list, tenant, stranger, request?._id as string)
  })
})

describe('POST /reviews/requests/:id/cancel', () => {
  test('cancels a scheduled request; 409 for one not scheduled, 404 for another account', async ({
    t,
    stranger,
  }) => {
    const tenant = await servingTenant(t)
    await serviceDelivered(t, tenant, { email: 'cancel@example.com' })
    const [request] = await waitForRequests(t, tenant, 2)
    const url = `/v1/reviews/requests/${request?._id}/cancel`
    await expectHiddenFromOtherAccounts(t.app, { method: 'POST', url }, tenant, stranger)
    const [cancelled] = await requestsOf(t, tenant, 'status=cancelled')
    expect(cancelled).toMatchObject({ _id: request?._id, reason: 'cancelled_by_user' })
    const again = await t.app.inject({ method: 'POST', url, headers: tenant.headers })
    expect(again.statusCode).toBe(409)
    expect(again.json().message).toBe(
      'Only a scheduled review request can be cancelled; this one is cancelled',
    )
    const unknown = await t.app.inject({
      method: 'POST',
      url: '/reviews/requests/0123456789abcdef01234567/cancel',
      headers: tenant.headers,
    })
    expect(unknown.json()).toMatchObject({ errno: 404, message: 'Review request not found' })
    expect(await requestsOf(t, stranger)).toEqual([])
  })

  test('needs a token with reviews.write', async ({ t }) => {
    const url = '/reviews/requests/0123456789abcdef01234567/cancel'
    expect((await t.app.inject({ method: 'POST', url })).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/reviews/requests' })).statusCode).toBe(401)
  })
})
