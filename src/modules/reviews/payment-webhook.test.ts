import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually, makeJobsDue, waitingJobStarts } from '../../../test/helpers/jobs.js'
import { randomText } from '../../../test/helpers/long-strings.js'
import { removedInPlace } from '../../../test/helpers/removed-in-place.js'
import {
  chargeFor,
  putConfiguration,
  REVIEW_CONFIGURATION,
  requestJobs,
  requestsOf,
  reviewingTenant,
  sendRequestOfCharge,
  storedEvents,
  stripePost,
  waitForRequests,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { FOLLOW_UP_JOB, SEND_REQUEST_JOB } from './jobs.js'
import { SOURCE_REF_TOO_LONG } from './scheduling.service.js'
import { PROVIDER_ID_MAX_LENGTH } from './webhook-events.schemas.js'

const SECRET = 'whsec_test_reviews_secret'
test.override('appEnv', { STRIPE_WEBHOOK_SECRET: SECRET, PUBLIC_BASE_URL: 'https://platform.example.com' })

let sequence = 0
/** A Stripe `charge.succeeded` event for the tenant's customer. */
function chargeEvent(tenant: Tenant, overrides: { charge?: object; type?: string; email?: string } = {}) {
  sequence++
  return {
    id: `evt_${sequence}_${Date.now()}`,
    object: 'event',
    type: overrides.type ?? 'charge.succeeded',
    data: {
      object: {
        id: `ch_${sequence}`,
        object: 'charge',
        amount: 4200,
        currency: 'usd',
        status: 'succeeded',
        payment_intent: `pi_${sequence}`,
        billing_details: {
          name: 'Grace Hopper',
          email: overrides.email ?? `grace${sequence}@example.com`,
          phone: null,
        },
        metadata: { account_id: tenant.accountId, order_id: `order-${sequence}` },
        ...overrides.charge,
      },
    },
  }
}

describe('payment webhook (Stripe)', () => {
  test('refuses a missing, wrong or stale signature with 400 and stores nothing', async ({ t, owner }) => {
    const post = stripePost(SECRET, chargeEvent(owner))
    const unsigned = await t.app.inject({ ...post, headers: { 'content-type': 'application/json' } })
    expect(unsigned.statusCode).toBe(400)
    expect(unsigned.json()).toMatchObject({ success: false, message: 'Invalid signature' })
    expect((await t.app.inject(stripePost('whsec_someone_else', chargeEvent(owner)))).statusCode).toBe(400)
    const stale = stripePost(SECRET, chargeEvent(owner), Math.floor(Date.now() / 1000) - 301)
    expect((await t.app.inject(stale)).statusCode).toBe(400)
    const tampered = { ...post, payload: post.payload.replace('4200', '9999') }
    expect((await t.app.inject(tampered)).statusCode).toBe(400)
    expect(await storedEvents(t)).toEqual([])
  })

  test('a succeeded charge schedules one request per platform after delay_hours, through the queue', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t, { platforms: ['google', 'yelp'] })
    const before = Date.now()
    const response = await t.app.inject(stripePost(SECRET, chargeEvent(tenant)))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    const requests = await waitForRequests(t, tenant, 2)
    expect(requests.map((r) => r.platform).sort()).toEqual(['google', 'yelp'])
    for (const request of requests) {
      expect(request.status).toBe('scheduled')
      const due = Date.parse(request.scheduled_for)
      expect(due - before).toBeGreaterThanOrEqual(2 * 3_600_000 - 1000)
      expect(due - Date.now()).toBeLessThanOrEqual(2 * 3_600_000)
      expect(await waitingJobStarts(t, requestJobs(SEND_REQUEST_JOB, request._id))).toEqual([new Date(due)])
    }
    // Made due now, the jobs send: yelp has no review link, so it is skipped at send time.
    for (const request of requests) await makeJobsDue(t, requestJobs(SEND_REQUEST_JOB, request._id))
    await waitForRequests(t, tenant, 1, 'status=sent&platform=google')
    const [yelp] = await waitForRequests(t, tenant, 1, 'status=skipped')
    expect(yelp).toMatchObject({ platform: 'yelp', reason: 'no_review_link' })
  })

  test('a repeated event, and the same payment announced twice, schedule once', async ({ t }) => {
    const tenant = await reviewingTenant(t)
    const event = chargeEvent(tenant)
    const intentEvent = {
      ...event,
      id: `${event.id}_intent`,
      type: 'payment_intent.succeeded',
      data: {
        object: { ...event.data.object, id: event.data.object.payment_intent, object: 'payment_intent' },
      },
    }
    for (const body of [event, event, intentEvent]) {
      expect((await t.app.inject(stripePost(SECRET, body))).statusCode).toBe(200)
    }
    await waitForRequests(t, tenant, 1)
    await eventually(async () => {
      // Whichever of the two events is applied first schedules; the other finds the payment scheduled.
      const outcomes = (await storedEvents(t)).filter((e) => e.event_id.startsWith(event.id))
      expect(outcomes.map((e) => `${e.status} ${e.reason}`).sort()).toEqual([
        'processed null',
        'skipped repeated_event',
      ])
    })
  })

  test('two payments of one customer posted at once make exactly one request (30 days)', async ({ t }) => {
    const tenant = await reviewingTenant(t)
    const posts = [
      chargeEvent(tenant, { email: 'twice@example.com' }),
      chargeEvent(tenant, { email: 'TWICE@example.com' }),
    ]
    const answers = await Promise.all(posts.map((body) => t.app.inject(stripePost(SECRET, body))))
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200])
    const requests = await waitForRequests(t, tenant, 2)
    expect(requests.map((r) => r.status).sort()).toEqual(['scheduled', 'skipped'])
    expect(requests.find((r) => r.status === 'skipped')?.reason).toBe('frequency_limit')
    expect(await requestsOf(t, tenant, 'customer=Twice%40Example.com')).toHaveLength(2)
    expect(await requestsOf(t, tenant, 'customer=someone%40example.com')).toEqual([])
  })

  test("skips with the spec's reasons and answers 200; a missing account_id fails, kept", async ({ t }) => {
    const tenant = await reviewingTenant(t)
    const unconfigured = await createTenant(t.app)
    const cases: [object, string, string][] = [
      [chargeEvent(unconfigured), 'skipped', 'no_configuration'],
      [chargeEvent(tenant, { charge: { status: 'failed' } }), 'skipped', 'not_succeeded'],
      [
        chargeEvent(tenant, { charge: { billing_details: {}, receipt_email: null } }),
        'skipped',
        'missing_customer_contact',
      ],
      [chargeEvent(tenant, { charge: { metadata: {} } }), 'failed', 'missing_account_id'],
      [chargeEvent(tenant, { type: 'customer.created' }), 'skipped', 'unsupported_event'],
    ]
    for (const [body, status, reason] of cases) {
      const response = await t.app.inject(stripePost(SECRET, body))
      expect(response.statusCode).toBe(200)
      const id = (body as { id: string }).id
      await eventually(async () =>
        expect((await storedEvents(t)).find((e) => e.event_id === id)).toEqual({
          event_id: id,
          status,
          reason,
        }),
      )
    }
    // The tenant reads the same reasons in words (the payment naming no account is no account's).
    const events = (await t.app.inject({ url: '/reviews/events', headers: tenant.headers })).json().data
    expect(events.map((e: { reason_text: string }) => e.reason_text)).toEqual([
      'A customer.created event schedules nothing: only succeeded payments (charge, charge.succeeded, ' +
        'payment_intent.succeeded) and refunds (charge.refunded, refund.created) count',
      'The customer has no usable email address, and the configuration sends by email (send_method email)',
      "The payment's status is failed, not succeeded",
    ])
    await putConfiguration(t, tenant, { ...REVIEW_CONFIGURATION, enabled: false })
    const disabled = chargeEvent(tenant)
    await t.app.inject(stripePost(SECRET, disabled))
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === disabled.id)?.reason).toBe('disabled'),
    )
    expect(await requestsOf(t, tenant)).toEqual([])
  })

  // Values of thousands of characters reached the indexes of events, requests and refunds: 503s
  // answered to Stripe at every redelivery, or a job failing at every retry.
  test('refuses an event id longer than kept; brings events with oversized values to an outcome', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t)
    const long = randomText(3_000)
    const refused = await t.app.inject(stripePost(SECRET, { ...chargeEvent(tenant), id: long }))
    expect(refused.statusCode).toBe(400)
    expect(refused.json().message).toBe(`id must be at most ${PROVIDER_ID_MAX_LENGTH} characters long`)
    const paid = chargeEvent(tenant)
    const cases: [object, string, string][] = [
      [chargeEvent(tenant, { charge: { metadata: { account_id: long } } }), 'failed', 'unknown_account'],
      [chargeEvent(tenant, { charge: { payment_intent: long } }), 'failed', SOURCE_REF_TOO_LONG],
      [chargeEvent(tenant, { email: `${long}@example.com` }), 'skipped', 'missing_customer_contact'],
      [
        chargeEvent(tenant, {
          charge: { billing_details: { email: null, phone: randomText(8_000, '0123456789') } },
        }),
        'skipped',
        'missing_customer_contact',
      ],
      [
        {
          ...paid,
          type: 'charge.refunded',
          data: { object: { ...paid.data.object, id: long, payment_intent: long } },
        },
        'skipped',
        'refunds_not_excluded',
      ],
    ]
    for (const [body, status, reason] of cases) {
      expect((await t.app.inject(stripePost(SECRET, body))).statusCode).toBe(200)
      const id = (body as { id: string }).id
      await eventually(async () =>
        expect((await storedEvents(t)).find((e) => e.event_id === id)).toEqual({
          event_id: id,
          status,
          reason,
        }),
      )
    }
    expect(await requestsOf(t, tenant)).toEqual([])
  })

  test('conditions: min_order_value in minor units, and a refund cancels when refunds are excluded', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t, { conditions: { min_order_value: 5000, exclude_refunded: true } })
    const small = chargeEvent(tenant)
    await t.app.inject(stripePost(SECRET, small))
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === small.id)?.reason).toBe(
        'below_min_order_value',
      ),
    )
    const large = chargeEvent(tenant, { charge: { amount: 5000 } })
    await t.app.inject(stripePost(SECRET, large))
    const [request] = await waitForRequests(t, tenant, 1, 'status=scheduled')
    const refund = {
      id: `${large.id}_refund`,
      object: 'event',
      type: 'charge.refunded',
      data: { object: { ...large.data.object, refunded: true } },
    }
    await t.app.inject(stripePost(SECRET, refund))
    const [cancelled] = await waitForRequests(t, tenant, 1, 'status=cancelled')
    expect(cancelled).toMatchObject({ _id: request?._id, reason: 'refunded' })
  })

  test('a refund is kept: read again at send time, and before its payment when it arrives first', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t)
    const refundOf = (charge: ReturnType<typeof chargeEvent>) => ({
      id: `${charge.id}_refund`,
      object: 'event',
      type: 'charge.refunded',
      data: { object: { ...charge.data.object, refunded: true } },
    })
    // Refunds not excluded when it arrives: the request stays; excluded by its send time: cancelled.
    const paid = chargeEvent(tenant)
    await t.app.inject(stripePost(SECRET, paid))
    const [request] = await waitForRequests(t, tenant, 1, 'status=scheduled')
    await t.app.inject(stripePost(SECRET, refundOf(paid)))
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === `${paid.id}_refund`)?.reason).toBe(
        'refunds_not_excluded',
      ),
    )
    await putConfiguration(t, tenant, { ...REVIEW_CONFIGURATION, conditions: { exclude_refunded: true } })
    await makeJobsDue(t, requestJobs(SEND_REQUEST_JOB, request?._id as string))
    const [cancelled] = await waitForRequests(t, tenant, 1, 'status=cancelled')
    expect(cancelled).toMatchObject({ _id: request?._id, reason: 'refunded', sent_at: null })

    // The refund's event delivered before the payment's: the payment schedules nothing.
    const early = chargeEvent(tenant)
    await t.app.inject(stripePost(SECRET, refundOf(early)))
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === `${early.id}_refund`)?.status).toBe(
        'skipped',
      ),
    )
    await t.app.inject(stripePost(SECRET, early))
    await eventually(async () =>
      expect((await storedEvents(t)).find((e) => e.event_id === early.id)?.reason).toBe('refunded'),
    )
    expect(await requestsOf(t, tenant)).toHaveLength(1)
  })

  test("with Stripe's webhook set up, payments are a source of order_completed: no warning says otherwise", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const saved = await putConfiguration(t, tenant, REVIEW_CONFIGURATION)
    expect(saved.statusCode).toBe(200)
    expect(saved.json().warnings.filter((w: string) => w.includes('order_completed'))).toEqual([])
  })

  test('the spec bare charge object is accepted too', async ({ t }) => {
    const tenant = await reviewingTenant(t)
    const charge = {
      id: `ch_bare_${Date.now()}`,
      amount: 1500,
      currency: 'eur',
      customer: 'cus_1',
      description: 'Two croissants',
      metadata: { account_id: tenant.accountId, order_id: 'o-1', customer_email: 'bare@example.com' },
      status: 'succeeded',
    }
    expect((await t.app.inject(stripePost(SECRET, charge))).statusCode).toBe(200)
    const [request] = await waitForRequests(t, tenant, 1)
    expect(request).toMatchObject({ source_ref: charge.id, status: 'scheduled' })
  })
})

describe('sending, clicks and follow-ups', () => {
  test('a click moves a sent request to clicked and cancels its follow-up; bots and repeats count nothing', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t, { follow_up: { enabled: true, delay_hours: 48 } })
    await t.app.inject(stripePost(SECRET, chargeEvent(tenant, { email: 'clicker@example.com' })))
    const [request] = await waitForRequests(t, tenant, 1)
    await makeJobsDue(t, requestJobs(SEND_REQUEST_JOB, request?._id as string))
    const [sent] = await waitForRequests(t, tenant, 1, 'status=sent')
    const [followUpAt] = await waitingJobStarts(t, requestJobs(FOLLOW_UP_JOB, sent?._id as string))
    expect((followUpAt?.getTime() ?? 0) - Date.now()).toBeGreaterThan(47 * 3_600_000)

    const mail = await t.app.inject({ url: '/v1/e/mailprovider/communications', headers: tenant.headers })
    const html = JSON.stringify(mail.json().data)
    const code = /https:\/\/platform\.example\.com\/r\/([A-Za-z0-9_-]{12})/.exec(html)?.[1]
    expect(code, 'the email holds the tracked link').toBeDefined()
    expect(html).toContain('Corner Bakery')

    const asBot = await t.app.inject({
      url: `/r/${code}`,
      headers: { 'user-agent': 'Slackbot-LinkExpanding 1.0' },
    })
    expect(asBot.statusCode).toBe(302)
    expect(asBot.headers.location).toBe('https://g.page/r/corner-bakery/review')
    expect(await requestsOf(t, tenant, 'status=sent')).toHaveLength(1)
    const person = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1' }
    expect((await t.app.inject({ url: `/r/${code}`, headers: person })).statusCode).toBe(302)
    const [clicked] = await requestsOf(t, tenant, 'status=clicked')
    expect(clicked?.clicked_at).toEqual(expect.any(String))
    await t.app.inject({ url: `/r/${code}`, headers: person })
    expect((await requestsOf(t, tenant, 'status=clicked'))[0]?.clicked_at).toBe(clicked?.clicked_at)

    await makeJobsDue(t, requestJobs(FOLLOW_UP_JOB, sent?._id as string))
    await eventually(async () =>
      expect(await waitingJobStarts(t, requestJobs(FOLLOW_UP_JOB, sent?._id as string))).toEqual([]),
    )
    const [after] = await requestsOf(t, tenant)
    expect(after).toMatchObject({ status: 'clicked', follow_up_sent_at: null })
    expect((await t.app.inject({ url: '/r/AAAAAAAAAAAA' })).statusCode).toBe(404)
  })

  test('a send due outside the send window waits, through the queue, for its next opening', async ({ t }) => {
    // A window opening two hours from now, for an hour, in UTC: now is outside it.
    const now = new Date()
    const hour = (offset: number) => `${String((now.getUTCHours() + offset) % 24).padStart(2, '0')}:00`
    const tenant = await reviewingTenant(t, {
      send_window: { start: hour(2), end: hour(3) },
      timezone: 'UTC',
    })
    await t.app.inject(stripePost(SECRET, chargeEvent(tenant)))
    const [request] = await waitForRequests(t, tenant, 1)
    await makeJobsDue(t, requestJobs(SEND_REQUEST_JOB, request?._id as string))
    const opening = new Date(
      Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate(), now.getUTCHours() + 2),
    )
    const [moved] = await eventually(async () => {
      const requests = await requestsOf(t, tenant, 'status=scheduled')
      expect(requests[0]?.scheduled_for).toBe(opening.toISOString())
      return requests
    })
    expect(await waitingJobStarts(t, requestJobs(SEND_REQUEST_JOB, moved?._id as string))).toEqual([opening])
    expect(moved?.sent_at).toBeNull()
  })
})

describe('a removed account, until its removal reaches its rows', () => {
  test('its review links are gone and its payments fail as an unknown account’s, scheduling nothing and keeping no customer data', async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t)
    await sendRequestOfCharge(t, SECRET, tenant, chargeFor(tenant, { email: 'leaving@example.com' }))
    const mail = await t.app.inject({ url: '/v1/e/mailprovider/communications', headers: tenant.headers })
    const code = /\/r\/([A-Za-z0-9_-]{12})/.exec(JSON.stringify(mail.json().data))?.[1]
    await removedInPlace(t, tenant.accountId)

    const person = { 'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Safari/604.1' }
    const click = await t.app.inject({ url: `/r/${code}`, headers: person })
    const unknown = await t.app.inject({ url: '/r/unknown-code', headers: person })
    expect({ status: click.statusCode, body: click.json() }).toEqual({
      status: unknown.statusCode,
      body: unknown.json(),
    })
    expect(click.statusCode).toBe(404)

    const removedCharge = chargeEvent(tenant)
    const unknownCharge = chargeEvent({ ...tenant, accountId: newId() })
    for (const charge of [removedCharge, unknownCharge])
      expect((await t.app.inject(stripePost(SECRET, charge))).statusCode).toBe(200)
    await eventually(async () => {
      const outcomes = (await storedEvents(t)).filter((e) =>
        [removedCharge.id, unknownCharge.id].includes(e.event_id),
      )
      expect(outcomes.map((e) => `${e.status} ${e.reason}`)).toEqual([
        'failed unknown_account',
        'failed unknown_account',
      ])
    })
    const listed = await t.app.inject({
      url: '/v1/admin/reviews/webhook-events?limit=100',
      headers: adminHeaders,
    })
    const payloads = (listed.json().data as { event_id: string; payload: unknown }[])
      .filter((e) => [removedCharge.id, unknownCharge.id].includes(e.event_id))
      .map((e) => e.payload)
    expect(payloads).toEqual([{}, {}])
  })
})
