import { randomUUID } from 'node:crypto'
import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import {
  chargeFor,
  expectOnlyOwnerSees,
  expectWrittenToCallerOnly,
  insertedId,
  insertReviewEvents,
  putConfiguration,
  REVIEW_CONFIGURATION,
  requestsOf,
  reviewingTenant,
  squarePost,
  storedEvents,
  stripePost,
  waitForRequests,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { queueWebhookEvent } from './jobs.js'

const STRIPE_SECRET = 'whsec_test_account_events'
const SQUARE_KEY = 'square-signature-key-for-account-events'
const SQUARE_URL = 'https://platform.example.com/reviews/webhook/orderprovider/order'
// Square's orders are read from the event itself: no SQUARE_ACCESS_TOKEN.
test.override('appEnv', {
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  SQUARE_WEBHOOK_SIGNATURE_KEY: SQUARE_KEY,
  SQUARE_WEBHOOK_URL: SQUARE_URL,
})

let sequence = 0
const report = (t: TestApp, tenant: Tenant, payload: object, prefix = '/reviews') =>
  t.app.inject({ method: 'POST', url: `${prefix}/events`, headers: tenant.headers, payload })

/** An event of the tenant's own systems about a customer reachable by email. */
function accountEvent(trigger: string, overrides: object = {}) {
  sequence++
  return {
    trigger,
    event_id: `visit-${sequence}`,
    customer: { name: 'Ada Lovelace', email: `ada${sequence}@example.com` },
    ...overrides,
  }
}

const outcomeOf = (t: TestApp, eventId: string) =>
  eventually(async () => {
    const event = (await storedEvents(t, 'source=account')).find((e) => e.event_id.endsWith(`:${eventId}`))
    expect(event?.status).not.toBe('received')
    return event
  })

describe('POST /reviews/events', () => {
  test.for(['service_delivered', 'appointment_finished', 'custom_event'])(
    'a %s event schedules a request when it is the configuration trigger',
    async (trigger, { t }) => {
      const tenant = await reviewingTenant(t, { trigger, delay_hours: 0 })
      const event = accountEvent(trigger)
      const response = await report(t, tenant, event, '/v1/reviews')
      expect(response.statusCode).toBe(202)
      expect(response.json()).toMatchObject({
        success: true,
        data: { event_id: event.event_id, trigger, status: 'received' },
      })
      const [request] = await waitForRequests(t, tenant, 1)
      expect(request).toMatchObject({
        status: expect.stringMatching(/^(scheduled|sent)$/),
        platform: 'google',
        source_ref: `event:${event.event_id}`,
        customer: { name: 'Ada Lovelace', email: event.customer.email, phone: null },
      })
      expect(await outcomeOf(t, event.event_id)).toMatchObject({ status: 'processed', reason: null })
    },
  )

  test('another trigger than the configuration schedules nothing (trigger_mismatch)', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered' })
    const event = accountEvent('appointment_finished')
    expect((await report(t, tenant, event)).statusCode).toBe(202)
    expect(await outcomeOf(t, event.event_id)).toMatchObject({
      status: 'skipped',
      reason: 'trigger_mismatch',
    })
    expect(await requestsOf(t, tenant)).toEqual([])
  })

  test('a repeated event_id answers 200 with the stored event and is applied once', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'custom_event' })
    const event = accountEvent('custom_event')
    const first = await report(t, tenant, event)
    await waitForRequests(t, tenant, 1)
    const again = await report(t, tenant, { ...event, customer: { email: 'someone-else@example.com' } })
    expect(again.statusCode).toBe(200)
    expect(again.json().data).toMatchObject({ _id: first.json().data._id, status: 'processed' })
    expect(await requestsOf(t, tenant)).toHaveLength(1)
  })

  test("event ids are the account's own: another account's same id is its own event", async ({
    t,
    stranger,
  }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered' })
    const event = accountEvent('service_delivered')
    await putConfiguration(t, stranger, { ...REVIEW_CONFIGURATION, trigger: 'service_delivered' })
    const own = await report(t, tenant, event)
    const theirs = await report(t, stranger, event)
    expect([own.statusCode, theirs.statusCode]).toEqual([202, 202])
    expect(theirs.json().data._id).not.toBe(own.json().data._id)
    await waitForRequests(t, tenant, 1)
    await waitForRequests(t, stranger, 1)
    expect((await requestsOf(t, stranger))[0]?.source_ref).toBe(`event:${event.event_id}`)
  })

  test('order_value is compared with min_order_value in minor units', async ({ t }) => {
    const tenant = await reviewingTenant(t, {
      trigger: 'service_delivered',
      conditions: { min_order_value: 10_000 },
    })
    const small = accountEvent('service_delivered', { order_value: 9_999, currency: 'usd' })
    await report(t, tenant, small)
    expect(await outcomeOf(t, small.event_id)).toMatchObject({ reason: 'below_min_order_value' })
    const large = accountEvent('service_delivered', { order_value: 10_000, currency: 'usd' })
    await report(t, tenant, large)
    expect(await outcomeOf(t, large.event_id)).toMatchObject({ status: 'processed' })
  })

  test('refuses a wrong trigger, field by field, and stores nothing', async ({ t, owner }) => {
    const before = await storedEvents(t, 'source=account')
    const wrongTrigger = await report(t, owner, accountEvent('order_shipped'))
    expect(wrongTrigger.statusCode).toBe(400)
    expect(wrongTrigger.json()).toMatchObject({ success: false, message: 'Invalid trigger type' })
    const cases: [object, string][] = [
      [{ event_id: '' }, 'event_id'],
      [{ customer: { email: 'not-an-email' } }, 'email'],
      [{ customer: { phone: '555-0100' } }, 'phone'],
      [{ order_value: -1 }, 'order_value'],
      [{ order_value: 1e20 }, 'order_value'],
      [{ currency: 'dollars' }, 'currency'],
      [{ customer: undefined }, 'customer'],
    ]
    for (const [overrides, field] of cases) {
      const response = await report(t, owner, accountEvent('custom_event', overrides))
      expect(response.statusCode, field).toBe(400)
      expect(response.json().message).toContain(field)
    }
    expect(await storedEvents(t, 'source=account')).toEqual(before)
  })

  test('needs a token with reviews.write', async ({ t }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/reviews/events',
      payload: accountEvent('custom_event'),
    })
    expect(response.statusCode).toBe(401)
  })
})

interface ListedEvent {
  _id: string
  source: string
  event_id: string
  type: string
  trigger: string | null
  status: string
  reason: string | null
  reason_text: string | null
}

/** `GET /reviews/events` as the tenant: its events, newest first. */
const eventsOf = async (t: TestApp, tenant: Tenant, query = '') => {
  const response = await t.app.inject({ url: `/reviews/events?limit=100&${query}`, headers: tenant.headers })
  expect(response.statusCode, response.body).toBe(200)
  return response.json().data as ListedEvent[]
}

/** Waits until each of the tenant's events named is applied; they are returned in the order named. */
const appliedEvents = (t: TestApp, tenant: Tenant, eventIds: string[]) =>
  eventually(async () => {
    const events = await eventsOf(t, tenant)
    const named = eventIds.map((id) => events.find((event) => event.event_id === id))
    expect(named.map((event) => event?.status ?? 'missing')).not.toContain('received')
    expect(named.map((event) => event?.status ?? 'missing')).not.toContain('missing')
    return named as ListedEvent[]
  })

let locations = 0
/** A Square location the tenant claims; its id. */
async function claimedLocation(t: TestApp, tenant: Tenant): Promise<string> {
  const locationId = `LOC${++locations}${randomUUID().slice(0, 8)}`
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/orderprovider/locations',
    headers: tenant.headers,
    payload: { location_id: locationId },
  })
  expect(response.statusCode).toBe(201)
  return locationId
}

/** A Square `order.created` carrying its COMPLETED order (the spec's shape), for a customer reached by email. */
function completedOrderEvent(locationId: string) {
  const order = {
    id: `ORD${randomUUID().slice(0, 12)}`,
    location_id: locationId,
    state: 'COMPLETED',
    total_money: { amount: 4200, currency: 'USD' },
    fulfillments: [{ pickup_details: { recipient: { email_address: 'order@example.com' } } }],
  }
  return {
    merchant_id: 'MLEFBHHSJGVHD',
    type: 'order.created',
    event_id: randomUUID(),
    created_at: new Date().toISOString(),
    data: { type: 'order', id: order.id, object: { order } },
  }
}

describe('GET /reviews/events', () => {
  test("lists the account's own events and the payments attributed to it, newest first, each with its outcome in words", async ({
    t,
    stranger,
  }) => {
    const tenant = await reviewingTenant(t, {
      trigger: 'service_delivered',
      conditions: { min_order_value: 10_000 },
    })
    const small = accountEvent('service_delivered', { order_value: 9_999, currency: 'usd' })
    const otherTrigger = accountEvent('appointment_finished')
    const large = accountEvent('service_delivered', { order_value: 10_000, currency: 'usd' })
    for (const event of [small, otherTrigger, large])
      expect((await report(t, tenant, event)).statusCode).toBe(202)
    const charge = chargeFor(tenant, { email: 'payer@example.com' })
    expect((await t.app.inject(stripePost(STRIPE_SECRET, charge))).statusCode).toBe(200)
    const theirs = accountEvent('service_delivered')
    await report(t, stranger, theirs)
    const named = chargeFor(tenant, { email: 'nobody@example.com' })
    const nobodys = { ...named, data: { object: { ...named.data.object, metadata: {} } } }
    await t.app.inject(stripePost(STRIPE_SECRET, nobodys))

    const ids = [charge.id, large.event_id, otherTrigger.event_id, small.event_id]
    const applied = await appliedEvents(t, tenant, ids)
    expect(applied).toEqual([
      expect.objectContaining({
        source: 'paymentprovider',
        type: 'charge.succeeded',
        trigger: 'order_completed',
        status: 'skipped',
        reason: 'trigger_mismatch',
        reason_text: "The configuration's trigger is service_delivered; this event is order_completed",
      }),
      expect.objectContaining({
        source: 'account',
        type: 'service_delivered',
        trigger: 'service_delivered',
        status: 'processed',
        reason: null,
        reason_text: null,
      }),
      expect.objectContaining({
        trigger: 'appointment_finished',
        status: 'skipped',
        reason: 'trigger_mismatch',
        reason_text: "The configuration's trigger is service_delivered; this event is appointment_finished",
      }),
      expect.objectContaining({
        status: 'skipped',
        reason: 'below_min_order_value',
        reason_text:
          "The order value 9999 USD is below the configuration's min_order_value 10000 (both in minor units)",
      }),
    ])
    // Newest first, and only the account's: not another account's, not a payment naming no account.
    const listed = await eventsOf(t, tenant)
    expect(listed.map((event) => event.event_id)).toEqual(ids)
    expect(JSON.stringify(listed)).not.toContain(theirs.event_id)
  })

  test('payment and order webhooks count only as order_completed: a succeeded charge and a COMPLETED order skip a service_delivered configuration (trigger_mismatch)', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t, { trigger: 'service_delivered' })
    const locationId = await claimedLocation(t, tenant)
    const charge = chargeFor(tenant, { email: 'paid@example.com' })
    expect((await t.app.inject(stripePost(STRIPE_SECRET, charge))).statusCode).toBe(200)
    const order = completedOrderEvent(locationId)
    expect((await t.app.inject(squarePost(SQUARE_KEY, SQUARE_URL, order))).statusCode).toBe(200)
    const mismatch = {
      trigger: 'order_completed',
      status: 'skipped',
      reason: 'trigger_mismatch',
      reason_text: "The configuration's trigger is service_delivered; this event is order_completed",
    }
    expect(await appliedEvents(t, tenant, [order.event_id, charge.id])).toEqual([
      expect.objectContaining({ source: 'orderprovider', type: 'order.created', ...mismatch }),
      expect.objectContaining({ source: 'paymentprovider', type: 'charge.succeeded', ...mismatch }),
    ])
    expect(await requestsOf(t, tenant)).toEqual([])
  })

  test("an order received before its location was claimed is the account's that claims it when applied", async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t)
    const locationId = await claimedLocation(t, tenant)
    const order = completedOrderEvent(locationId)
    // As the webhook stored it while the location was no account's; its job runs once the tenant claimed it.
    const { db, queue } = t.app.platform
    const rowId = '0123456789abcdef0123abcd'
    await db.execute(sql`
      insert into review_webhook_events (id, source, event_id, type, trigger, payload)
      values (${rowId}, 'orderprovider', ${order.event_id}, 'order.created', 'order_completed',
        ${JSON.stringify(order)}::jsonb)`)
    queueWebhookEvent(queue, rowId)
    const [applied] = await appliedEvents(t, tenant, [order.event_id])
    expect(applied).toMatchObject({ _id: rowId, status: 'processed' })
    expect(await requestsOf(t, tenant)).toHaveLength(1)
  })

  test('filters by status, trigger, from and to, and pages', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'custom_event' })
    const first = accountEvent('custom_event')
    const second = accountEvent('service_delivered')
    const third = accountEvent('custom_event')
    // Each applied before the next is reported: they are received milliseconds apart at least.
    const reported: string[] = []
    for (const event of [first, second, third]) {
      await report(t, tenant, event)
      reported.unshift(event.event_id)
      await appliedEvents(t, tenant, reported)
    }
    const [newest, , oldest] = await appliedEvents(t, tenant, reported)
    const idsOf = async (query: string) => (await eventsOf(t, tenant, query)).map((event) => event.event_id)
    expect(await idsOf('status=skipped')).toEqual([second.event_id])
    expect(await idsOf('status=processed&trigger=custom_event')).toEqual([third.event_id, first.event_id])
    expect(await idsOf('trigger=appointment_finished')).toEqual([])
    const at = async (id: string) =>
      (await t.app.inject({ url: `/v1/reviews/events/${id}`, headers: tenant.headers })).json().data
        .created_at
    // The API's times are in milliseconds: the oldest event was received within its millisecond.
    const oldestEnd = new Date(Date.parse(await at(oldest?._id as string)) + 1).toISOString()
    expect(await idsOf(`from=${await at(newest?._id as string)}`)).toEqual([third.event_id])
    expect(await idsOf(`to=${oldestEnd}`)).toEqual([first.event_id])
    const page = await t.app.inject({ url: '/reviews/events?limit=2&page=2', headers: tenant.headers })
    expect(page.json()).toMatchObject({
      success: true,
      data: [{ event_id: first.event_id }],
      pagination: { total: 3, page: 2, limit: 2, pages: 2 },
    })
    for (const query of ['status=lost', 'trigger=order_shipped', 'from=yesterday', 'limit=101']) {
      const refused = await t.app.inject({ url: `/reviews/events?${query}`, headers: tenant.headers })
      expect(refused.statusCode, query).toBe(400)
      expect(refused.json().message).toContain(query.split('=')[0])
    }
  })

  test('walks the events with cursors, a filter kept; counts up to the cap', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'custom_event' })
    await insertReviewEvents(t, '00d0', 20, tenant.accountId)
    const newestFirst = Array.from({ length: 20 }, (_, i) => 20 - i)
    await expectCursorWalk(
      t.app,
      '/reviews/events',
      tenant.headers,
      newestFirst.map((n) => insertedId('00d0', n)),
      async () => {
        await report(t, tenant, accountEvent('custom_event'))
      },
    )
    expect(await walkWithCursors(t.app, '/reviews/events?status=skipped', tenant.headers, 2)).toEqual(
      newestFirst.filter((n) => n % 3 === 0).map((n) => insertedId('00d0', n)),
    )
    await expectListRefusals(t.app, '/reviews/events', tenant.headers, 100)
    await insertReviewEvents(t, '00d1', LIST_TOTAL_CAP, tenant.accountId)
    await expectCappedTotal(t.app, '/reviews/events', tenant.headers, 100)
  })

  test("is the account's own: another account sees none of its events, and reports its own", async ({
    t,
    owner,
    stranger,
  }) => {
    const mine = accountEvent('custom_event')
    const read = { method: 'GET' as const, url: '/v1/reviews/events?limit=100' }
    await expectWrittenToCallerOnly(
      t,
      { method: 'POST', url: '/reviews/events', payload: mine },
      read,
      owner,
      stranger,
      mine.event_id,
    )
    await expectOnlyOwnerSees(t, { method: 'GET', url: '/reviews/events' }, owner, stranger, mine.event_id)
  })

  test('needs a token with reviews.read', async ({ t }) => {
    expect((await t.app.inject({ url: '/reviews/events' })).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/reviews/events/0123456789abcdef01234567' })).statusCode).toBe(401)
  })
})

describe('GET /reviews/events/:id', () => {
  test('answers the event as received, with the requests it scheduled', async ({ t }) => {
    const tenant = await reviewingTenant(t, { trigger: 'custom_event', platforms: ['google', 'yelp'] })
    const event = accountEvent('custom_event')
    const stored = (await report(t, tenant, event)).json().data
    await waitForRequests(t, tenant, 2)
    const response = await t.app.inject({ url: `/reviews/events/${stored._id}`, headers: tenant.headers })
    expect(response.statusCode).toBe(200)
    const detail = response.json().data
    expect(detail).toMatchObject({
      _id: stored._id,
      source: 'account',
      event_id: event.event_id,
      status: 'processed',
      payload: { trigger: 'custom_event', event_id: event.event_id, customer: event.customer },
    })
    expect(detail.requests.map((request: { platform: string }) => request.platform)).toEqual([
      'google',
      'yelp',
    ])
    expect(detail.requests[0]).toMatchObject({ event_id: stored._id, status: 'scheduled' })
  })

  test("another account's event is not found, and its id says nothing", async ({ t, owner, stranger }) => {
    const stored = (await report(t, owner, accountEvent('custom_event'))).json().data
    const url = `/reviews/events/${stored._id}`
    await expectHiddenFromOtherAccounts(t.app, { method: 'GET', url }, owner, stranger)
    const unknown = await t.app.inject({
      url: '/reviews/events/0123456789abcdef01234567',
      headers: owner.headers,
    })
    const theirs = await t.app.inject({ url, headers: stranger.headers })
    expect(theirs.json()).toEqual(unknown.json())
    const malformed = await t.app.inject({ url: '/reviews/events/not-an-id', headers: owner.headers })
    expect(malformed.statusCode).toBe(400)
  })
})
