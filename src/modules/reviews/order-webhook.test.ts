import { randomUUID } from 'node:crypto'
import { describe, expect } from 'vitest'
import { startFakeSquareApi } from '../../../test/fakes/square-api.js'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { randomText } from '../../../test/helpers/long-strings.js'
import {
  putConfiguration,
  REVIEW_CONFIGURATION,
  requestsOf,
  reviewingTenant,
  squarePost,
  storedEvents,
  waitForRequests,
} from '../../../test/helpers/reviews.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import { readSquarePost } from './order-webhook.service.js'
import { SQUARE_VERSION } from './square.js'
import { PROVIDER_ID_MAX_LENGTH } from './webhook-events.schemas.js'

// Square's own test vector (square/square-nodejs-sdk, test/utilities/webhooksHelper.test.ts): this key
// and notification URL sign its example body with SDK_SIGNATURE.
const KEY = 'Ibxx_5AKakO-3qeNVR61Dw'
const NOTIFICATION_URL = 'https://webhook.site/679a4f3a-dcfa-49ee-bac5-9d0edad886b9'
const SDK_BODY =
  '{"merchant_id":"MLEFBHHSJGVHD","type":"webhooks.test_notification","event_id":"ac3ac95b-f97d-458c-a6e6-18981597e05f","created_at":"2022-07-13T20:30:59.037339943Z","data":{"type":"webhooks","id":"bc368e64-01aa-407e-b46e-3231809b1129"}}'
const SDK_SIGNATURE = 'GF4YkrJgGBDZ9NIYbNXBnMzqb2HoL4RW/S6vkZ9/2N4='
const ACCESS_TOKEN = 'EAAAl-square-access-token-for-tests'

const test = base.extend(
  'square',
  { scope: 'file' },
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from its pattern
  async ({}, { onCleanup }) => {
    const square = await startFakeSquareApi({ accessToken: ACCESS_TOKEN })
    onCleanup(() => square.close())
    return square
  },
)
test.override('appEnv', ({ square }) => ({
  SQUARE_WEBHOOK_SIGNATURE_KEY: KEY,
  SQUARE_WEBHOOK_URL: NOTIFICATION_URL,
  SQUARE_ACCESS_TOKEN: ACCESS_TOKEN,
  SQUARE_BASE_URL: square.url,
}))

let sequence = 0
const nextId = (prefix: string) => `${prefix}${++sequence}${randomUUID().slice(0, 8)}`

/** A Square order, as `GET /v2/orders/{id}` answers it. */
const squareOrder = (locationId: string, fields: object = {}) => ({
  id: nextId('ORD'),
  location_id: locationId,
  state: 'COMPLETED',
  total_money: { amount: 4200, currency: 'USD' },
  ...fields,
})

/** `order.created` / `order.updated` as Square sends them: no totals, no customer. */
function squareEvent(type: 'order.created' | 'order.updated', order: { id: string; location_id: string }) {
  const announced = type === 'order.created' ? 'order_created' : 'order_updated'
  const eventId: string = randomUUID()
  return {
    merchant_id: 'MLEFBHHSJGVHD',
    type,
    event_id: eventId,
    created_at: new Date().toISOString(),
    data: {
      type: 'order',
      id: order.id,
      object: {
        [announced]: { order_id: order.id, location_id: order.location_id, state: 'OPEN', version: 1 },
      },
    },
  }
}

const post = (t: TestApp, body: object) => t.app.inject(squarePost(KEY, NOTIFICATION_URL, body))

async function claim(t: TestApp, tenant: Tenant, locationId: string) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/orderprovider/locations',
    headers: tenant.headers,
    payload: { location_id: locationId },
  })
  expect(response.statusCode).toBe(201)
}

/** A reviewing tenant claiming a fresh location; its id. */
async function squareSeller(t: TestApp) {
  const tenant = await reviewingTenant(t)
  const locationId = nextId('LOC')
  await claim(t, tenant, locationId)
  return { tenant, locationId }
}

const outcomeOf = (t: TestApp, eventId: string, expected: { status: string; reason: string | null }) =>
  eventually(async () =>
    expect((await storedEvents(t)).find((e) => e.event_id === eventId)).toEqual({
      event_id: eventId,
      ...expected,
    }),
  )

describe('order webhook (Square)', () => {
  test('refuses a missing, wrong or other-URL signature (and a signed post with no event_id or one longer than kept) with 400, storing nothing', async ({
    t,
  }) => {
    const body = squareEvent('order.updated', { id: 'ORD-X', location_id: 'LOC-X' })
    const signed = squarePost(KEY, NOTIFICATION_URL, body)
    const unsigned = await t.app.inject({ ...signed, headers: { 'content-type': 'application/json' } })
    expect(unsigned.statusCode).toBe(400)
    expect(unsigned.json()).toMatchObject({ success: false, message: 'Invalid signature' })
    for (const refused of [
      squarePost('another-signature-key', NOTIFICATION_URL, body),
      squarePost(KEY, 'https://platform.example.com/reviews/webhook/orderprovider/order', body),
      { ...signed, payload: signed.payload.replace('order.updated', 'order.created') },
      { ...signed, headers: { ...signed.headers, 'x-square-hmacsha256-signature': 'not base64' } },
    ]) {
      const response = await t.app.inject(refused)
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe('Invalid signature')
    }
    const withoutId = await t.app.inject(squarePost(KEY, NOTIFICATION_URL, { type: 'order.updated' }))
    expect(withoutId.statusCode).toBe(400)
    expect(withoutId.json().message).toBe('event_id is required')
    // An id of 3,000 characters failed the events' unique index, answered 503 at every redelivery.
    const longId = await post(t, { ...body, event_id: randomText(3_000) })
    expect(longId.statusCode).toBe(400)
    expect(longId.json().message).toBe(`event_id must be at most ${PROVIDER_ID_MAX_LENGTH} characters long`)
    // With SQUARE_WEBHOOK_SIGNATURE_KEY unset, even Square's own signed example is refused.
    expect(() =>
      readSquarePost({ webhookUrl: NOTIFICATION_URL }, SDK_SIGNATURE, Buffer.from(SDK_BODY)),
    ).toThrow('Invalid signature')
    expect(await storedEvents(t)).toEqual([])
  })

  test("accepts Square's documented example, signed by Square's SDK test vector", async ({ t }) => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/reviews/webhook/orderprovider/order',
      headers: { 'content-type': 'application/json', 'x-square-hmacsha256-signature': SDK_SIGNATURE },
      payload: SDK_BODY,
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    await outcomeOf(t, 'ac3ac95b-f97d-458c-a6e6-18981597e05f', {
      status: 'skipped',
      reason: 'unsupported_event',
    })
  })

  test('a COMPLETED order of a claimed location schedules one request, its customer read from Square', async ({
    t,
    square,
  }) => {
    const { tenant, locationId } = await squareSeller(t)
    const customerId = nextId('CUST')
    square.customers.set(customerId, {
      id: customerId,
      given_name: 'Grace',
      family_name: 'Hopper',
      email_address: 'grace@example.com',
      phone_number: '+15555550100',
    })
    const order = squareOrder(locationId, { customer_id: customerId })
    square.orders.set(order.id, order)
    const seen = square.requests.length
    const response = await post(t, squareEvent('order.updated', order))
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    const [request] = await waitForRequests(t, tenant, 1)
    expect(request).toMatchObject({
      status: 'scheduled',
      platform: 'google',
      source_ref: order.id,
      customer: { name: 'Grace Hopper', email: 'grace@example.com', phone: '+15555550100' },
      order_value: 4200,
      currency: 'USD',
    })
    const calls = square.requests.slice(seen)
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      `GET /v2/orders/${order.id}`,
      `GET /v2/customers/${customerId}`,
    ])
    for (const call of calls) {
      expect(call.headers.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
      expect(call.headers['square-version']).toBe(SQUARE_VERSION)
    }
  })

  test('order.created and order.updated of one order schedule once; a repeated event_id is stored once', async ({
    t,
    square,
  }) => {
    const { tenant, locationId } = await squareSeller(t)
    const order = squareOrder(locationId, { tenders: [{ customer_id: 'CUST-TENDER' }] })
    square.orders.set(order.id, order)
    square.customers.set('CUST-TENDER', { id: 'CUST-TENDER', email_address: 'tender@example.com' })
    const created = squareEvent('order.created', order)
    const updated = squareEvent('order.updated', order)
    for (const body of [created, updated, updated]) expect((await post(t, body)).statusCode).toBe(200)
    const [request] = await waitForRequests(t, tenant, 1)
    expect(request?.customer.email).toBe('tender@example.com')
    await eventually(async () => {
      const outcomes = (await storedEvents(t)).filter((e) =>
        [created.event_id, updated.event_id].includes(e.event_id),
      )
      expect(outcomes.map((e) => `${e.status} ${e.reason}`).sort()).toEqual([
        'processed null',
        'skipped repeated_event',
      ])
    })
  })

  test('skips, answering 200: an unclaimed location, an order not COMPLETED, one Square does not know', async ({
    t,
    square,
  }) => {
    const { tenant, locationId } = await squareSeller(t)
    const unclaimed = squareOrder(nextId('LOC'))
    const open = squareOrder(locationId, { state: 'OPEN' })
    const unknown = squareOrder(locationId)
    for (const order of [unclaimed, open]) square.orders.set(order.id, order)
    const cases: [typeof unclaimed, string][] = [
      [unclaimed, 'unclaimed_location'],
      [open, 'not_completed'],
      [unknown, 'order_not_found'],
    ]
    for (const [order, reason] of cases) {
      const event = squareEvent('order.updated', order)
      expect((await post(t, event)).statusCode).toBe(200)
      await outcomeOf(t, event.event_id, { status: 'skipped', reason })
    }
    expect(await requestsOf(t, tenant)).toEqual([])
    // The tenant sees its own two, in words; the unclaimed location's is no account's.
    const events = (await t.app.inject({ url: '/reviews/events', headers: tenant.headers })).json().data
    expect(events.map((e: { reason_text: string }) => e.reason_text)).toEqual([
      `Square does not know the order ${unknown.id}`,
      "The order's state is OPEN, not COMPLETED",
    ])
  })

  test('a claimed location makes Square a source of order_completed: the configuration warns until then', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const before = await putConfiguration(t, tenant, REVIEW_CONFIGURATION)
    expect(before.json().warnings).toContain(
      'Nothing sends order_completed for this account yet: no Square location is claimed (POST ' +
        '/reviews/orderprovider/locations), this server receives no Stripe payments (STRIPE_WEBHOOK_SECRET is ' +
        'unset), and no order was reported by POST /reviews/events; until one does, no request is scheduled',
    )
    await claim(t, tenant, nextId('LOC'))
    const after = await putConfiguration(t, tenant, REVIEW_CONFIGURATION)
    expect(after.json().warnings.filter((w: string) => w.includes('order_completed'))).toEqual([])
  })

  test("the spec's order shape under x-orderprovider-signature; a customer-less order uses its recipient", async ({
    t,
    square,
  }) => {
    const { tenant, locationId } = await squareSeller(t)
    const order = squareOrder(locationId, {
      fulfillments: [
        { pickup_details: { recipient: { display_name: 'Ada', email_address: 'ada@example.com' } } },
      ],
    })
    square.orders.set(order.id, order)
    const body = {
      merchant_id: 'MLEFBHHSJGVHD',
      type: 'order.created',
      event_id: randomUUID(),
      created_at: new Date().toISOString(),
      data: { type: 'order', id: order.id, object: { order } },
    }
    const signed = squarePost(KEY, NOTIFICATION_URL, body)
    const signature = signed.headers['x-square-hmacsha256-signature']
    const response = await t.app.inject({
      ...signed,
      headers: { 'content-type': 'application/json', 'x-orderprovider-signature': signature },
    })
    expect(response.statusCode).toBe(200)
    const [request] = await waitForRequests(t, tenant, 1)
    expect(request?.customer).toEqual({ name: 'Ada', email: 'ada@example.com', phone: null })
  })

  test('Square down: the job retries until Square answers; Square refusing fails the event', async ({
    t,
    square,
  }) => {
    const { tenant, locationId } = await squareSeller(t)
    const order = squareOrder(locationId, {
      fulfillments: [{ delivery_details: { recipient: { email_address: 'later@example.com' } } }],
    })
    square.orders.set(order.id, order)
    // Both attempts of the first run answer 503: the run throws and pg-boss runs the job again.
    square.failNext(2)
    const event = squareEvent('order.updated', order)
    expect((await post(t, event)).statusCode).toBe(200)
    await eventually(async () => expect(await requestsOf(t, tenant)).toHaveLength(1), {
      timeout: 15_000,
      interval: 200,
    })
    await outcomeOf(t, event.event_id, { status: 'processed', reason: null })

    square.failNext(1, { status: 403, category: 'AUTHENTICATION_ERROR', code: 'INSUFFICIENT_SCOPES' })
    const refused = squareEvent('order.updated', squareOrder(locationId))
    expect((await post(t, refused)).statusCode).toBe(200)
    await outcomeOf(t, refused.event_id, { status: 'failed', reason: 'square_insufficient_scopes' })
  })
})

describe('order webhook without SQUARE_ACCESS_TOKEN', () => {
  test('uses the order the event carries, and fails an event that carries none', async () => {
    const t = await buildTestApp({ SQUARE_WEBHOOK_SIGNATURE_KEY: KEY, SQUARE_WEBHOOK_URL: NOTIFICATION_URL })
    try {
      const { tenant, locationId } = await squareSeller(t)
      const order = squareOrder(locationId, {
        customer_id: 'CUST-NEVER-READ',
        fulfillments: [{ shipment_details: { recipient: { email_address: 'carried@example.com' } } }],
      })
      const carried = {
        merchant_id: 'MLEFBHHSJGVHD',
        type: 'order.created',
        event_id: randomUUID(),
        data: { type: 'order', id: order.id, object: { order } },
      }
      expect((await post(t, carried)).statusCode).toBe(200)
      const [request] = await waitForRequests(t, tenant, 1)
      expect(request).toMatchObject({
        source_ref: order.id,
        order_value: 4200,
        customer: { email: 'carried@example.com' },
      })
      const bare = squareEvent('order.updated', squareOrder(locationId))
      expect((await post(t, bare)).statusCode).toBe(200)
      await outcomeOf(t, bare.event_id, { status: 'failed', reason: 'square_access_token_unset' })
    } finally {
      await t.close()
    }
  })
})
