import { createHmac } from 'node:crypto'
import { sql } from 'drizzle-orm'
import Stripe from 'stripe'
import { expect } from 'vitest'
import { SEND_REQUEST_JOB } from '../../src/modules/reviews/jobs.js'
import { twilioSignature } from '../../src/modules/reviews/twilio.js'
import { adminHeaders, type TestApp } from './app.js'
import { createTenant, type RouteCall, type Tenant } from './fixtures.js'
import { eventually, type JobsOf, makeJobsDue } from './jobs.js'

/** `PUT /reviews/auto-review-request` as the tenant. */
export const putConfiguration = (t: TestApp, tenant: Tenant, payload: object, prefix = '/reviews') =>
  t.app.inject({ method: 'PUT', url: `${prefix}/auto-review-request`, headers: tenant.headers, payload })

/** A template of the tenant's, created through the API; its id. */
export async function createReviewTemplate(
  t: TestApp,
  tenant: Tenant,
  payload: object = {},
): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/templates',
    headers: tenant.headers,
    payload: {
      name: 'Thanks',
      channel: 'email',
      subject: 'Thanks, {{customer.name}}',
      body: '{{review.link}}',
      ...payload,
    },
  })
  if (response.statusCode !== 201)
    throw new Error(`template answered ${response.statusCode}: ${response.body}`)
  return response.json().data._id
}

/** The tenant's review URL for a platform, set through the API. */
export async function setReviewLink(
  t: TestApp,
  tenant: Tenant,
  platform: string,
  url: string,
): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/reviews/links',
    headers: tenant.headers,
    payload: { platform, url },
  })
  if (response.statusCode !== 201) throw new Error(`link answered ${response.statusCode}: ${response.body}`)
  return response.json().data._id
}

/** The waiting jobs (send or follow-up) of one review request, for waitingJobStarts and makeJobsDue. */
export const requestJobs = (name: string, requestId: string): JobsOf => ({
  name,
  field: 'request_id',
  value: requestId,
})

/** A Stripe webhook post, signed as Stripe signs it (`generateTestHeaderString`). */
export function stripePost(secret: string, body: object, timestamp?: number) {
  const payload = JSON.stringify(body)
  const signature = Stripe.webhooks.generateTestHeaderString({
    payload,
    secret,
    ...(timestamp && { timestamp }),
  })
  return {
    method: 'POST' as const,
    url: '/reviews/webhook/paymentprovider/charge',
    headers: { 'content-type': 'application/json', 'stripe-signature': signature },
    payload,
  }
}

export interface ListedRequest {
  _id: string
  status: string
  reason: string | null
  platform: string
  scheduled_for: string
  sent_at: string | null
  clicked_at: string | null
  follow_up_sent_at: string | null
  source_ref: string
  customer: { name: string; email: string | null; phone: string | null }
  created_at: string
}

/** `GET /reviews/requests` as the tenant: its requests, newest first. */
export const requestsOf = async (t: TestApp, tenant: Tenant, query = '') =>
  (await t.app.inject({ url: `/reviews/requests?${query}`, headers: tenant.headers })).json()
    .data as ListedRequest[]

/** Waits (polling, no sleep) until the tenant has `count` requests matching `query`; they are returned. */
export const waitForRequests = (t: TestApp, tenant: Tenant, count: number, query = '') =>
  eventually(async () => {
    const requests = await requestsOf(t, tenant, query)
    expect(requests).toHaveLength(count)
    return requests
  })

/** Every review event received, oldest first, as the operator reads them (the admin API). */
export async function storedEvents(t: TestApp, query = '') {
  const response = await t.app.inject({
    url: `/v1/admin/reviews/webhook-events?limit=100&${query}`,
    headers: adminHeaders,
  })
  const events = response.json().data as { event_id: string; status: string; reason: string | null }[]
  return events.map(({ event_id, status, reason }) => ({ event_id, status, reason })).reverse()
}

/** The spec's five required fields of a configuration: enabled, `order_completed`, 2 hours, Google, email. */
export const REVIEW_CONFIGURATION = {
  enabled: true,
  trigger: 'order_completed',
  delay_hours: 2,
  platforms: ['google'],
  send_method: 'email',
}

/** A tenant with an enabled configuration (REVIEW_CONFIGURATION), a Google review link and email credits. */
export async function reviewingTenant(t: TestApp, configuration: object = {}) {
  const tenant = await createTenant(t.app, { name: 'Corner Bakery' })
  await t.app.inject({
    method: 'POST',
    url: `/v1/admin/accounts/${tenant.accountId}/credits`,
    headers: adminHeaders,
    payload: { amount: 10 },
  })
  await setReviewLink(t, tenant, 'google', 'https://g.page/r/corner-bakery/review')
  const saved = await putConfiguration(t, tenant, { ...REVIEW_CONFIGURATION, ...configuration })
  if (saved.statusCode !== 200) throw new Error(`configuration answered ${saved.statusCode}: ${saved.body}`)
  return tenant
}

/**
 * A Square webhook post, signed as Square signs it: `x-square-hmacsha256-signature` is the base64
 * HMAC-SHA256 with the subscription's signature key over the notification URL followed by the body.
 */
export function squarePost(key: string, url: string, body: object) {
  const payload = JSON.stringify(body)
  const signature = createHmac('sha256', key)
    .update(url + payload)
    .digest('base64')
  return {
    method: 'POST' as const,
    url: '/reviews/webhook/orderprovider/order',
    headers: { 'content-type': 'application/json', 'x-square-hmacsha256-signature': signature },
    payload,
  }
}

let chargeSequence = 0
/** A Stripe `charge.succeeded` of the tenant's customer, reached at the email and phone given. */
export function chargeFor(tenant: Tenant, customer: { name?: string; email?: string; phone?: string }) {
  chargeSequence++
  const id = `ch_sms_${chargeSequence}_${Date.now()}`
  return {
    id: `evt_${id}`,
    object: 'event',
    type: 'charge.succeeded',
    data: {
      object: {
        id,
        object: 'charge',
        amount: 4200,
        currency: 'usd',
        status: 'succeeded',
        billing_details: {
          name: customer.name ?? 'Grace Hopper',
          email: customer.email ?? null,
          phone: customer.phone ?? null,
        },
        metadata: { account_id: tenant.accountId },
      },
    },
  }
}

/**
 * Posts the charge (signed), makes its scheduled review request's send job due and waits (polling) until the
 * request has left `scheduled`: the request as it then is.
 */
export async function sendRequestOfCharge(
  t: TestApp,
  secret: string,
  tenant: Tenant,
  charge: ReturnType<typeof chargeFor>,
): Promise<ListedRequest> {
  expect((await t.app.inject(stripePost(secret, charge))).statusCode).toBe(200)
  const ofCharge = async () =>
    (await requestsOf(t, tenant, 'limit=100')).find((request) => request.source_ref === charge.data.object.id)
  const waitUntil = (check: (request: ListedRequest | undefined) => void) =>
    eventually(async () => {
      const request = await ofCharge()
      check(request)
      return request as ListedRequest
    })
  const scheduled = await waitUntil((request) => expect(request?.status).toBe('scheduled'))
  await makeJobsDue(t, requestJobs(SEND_REQUEST_JOB, scheduled._id))
  return waitUntil((request) => expect(request?.status).not.toBe('scheduled'))
}

/** A Twilio webhook post, form-encoded and signed as Twilio signs it (X-Twilio-Signature, its auth token). */
export function twilioPost(
  authToken: string,
  publicBaseUrl: string,
  params: Record<string, string>,
  path = '/reviews/webhook/sms/inbound',
) {
  return {
    method: 'POST' as const,
    url: path,
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-twilio-signature': twilioSignature(authToken, `${publicBaseUrl}${path}`, params),
    },
    payload: new URLSearchParams(params).toString(),
  }
}

/**
 * Tenant isolation for a route that answers the caller's own rows (a list, the configuration): the owner's
 * answer holds `mark` (an id or a value only the owner's rows have), another account's same call answers
 * 2xx without it. The collection counterpart of expectHiddenFromOtherAccounts, whose 404 is for one resource.
 */
export async function expectOnlyOwnerSees(
  t: TestApp,
  read: RouteCall,
  owner: Tenant,
  stranger: Tenant,
  mark: string,
): Promise<void> {
  const asOwner = await t.app.inject({ ...read, headers: owner.headers })
  expect(asOwner.statusCode, `${read.method} ${read.url} as the owner`).toBeLessThan(300)
  expect(asOwner.body, `${read.method} ${read.url} as the owner`).toContain(mark)
  const asStranger = await t.app.inject({ ...read, headers: stranger.headers })
  expect(asStranger.statusCode, `${read.method} ${read.url} as another account`).toBeLessThan(300)
  expect(asStranger.body, `${read.method} ${read.url} as another account`).not.toContain(mark)
}

/**
 * Tenant isolation for a route that writes: what `writer` writes (holding `mark`) lands in its own account
 * only, as `read` shows it to the writer and not to another account.
 */
export async function expectWrittenToCallerOnly(
  t: TestApp,
  write: RouteCall,
  read: RouteCall,
  writer: Tenant,
  other: Tenant,
  mark: string,
): Promise<void> {
  const written = await t.app.inject({ ...write, headers: writer.headers })
  expect(written.statusCode, `${write.method} ${write.url}: ${written.body}`).toBeLessThan(300)
  await expectOnlyOwnerSees(t, read, writer, other, mark)
}

/**
 * `count` review events written straight into the table, ids `prefix` then the row's number in hex (20
 * digits), of `accountId` (none: no account's): pairs share a microsecond-precise time in 2025, every third
 * `skipped`, the others `processed`; or all at `at`.
 */
export const insertReviewEvents = (
  t: TestApp,
  prefix: string,
  count: number,
  accountId: string | null,
  at = sql`timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'`,
) =>
  t.app.platform.db.execute(sql`insert into review_webhook_events
      (id, source, event_id, type, account_id, payload, status, created_at)
    select ${prefix} || lpad(to_hex(n), 20, '0'), 'account', ${prefix} || '-' || n, 'custom_event', ${accountId},
      '{}'::jsonb, case when n % 3 = 0 then 'skipped' else 'processed' end, ${at}
    from generate_series(1, ${count}::int) as n`)

/** The id `insertReviewEvents` (and the like) gives row `n` under `prefix`. */
export const insertedId = (prefix: string, n: number) => `${prefix}${n.toString(16).padStart(20, '0')}`
