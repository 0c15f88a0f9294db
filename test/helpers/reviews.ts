import { sql } from 'drizzle-orm'
import Stripe from 'stripe'
import type { TestApp } from './app.js'
import type { Tenant } from './fixtures.js'

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

/** A review request job's scheduled start (pg-boss's `start_after`), by the request it sends. */
export async function jobStartOf(t: TestApp, jobName: string, requestId: string): Promise<Date[]> {
  const result = await t.app.platform.db.execute(
    sql`select start_after from pgboss.job where name = ${jobName} and data ->> 'request_id' = ${requestId} and state = 'created' order by start_after`,
  )
  return (result as unknown as { rows: { start_after: Date | string }[] }).rows.map(
    (row) => new Date(row.start_after),
  )
}

/** Makes the request's waiting job due now: the queue then runs it as it would at its time, no sleeping. */
export async function makeJobDue(t: TestApp, jobName: string, requestId: string): Promise<void> {
  await t.app.platform.db.execute(
    sql`update pgboss.job set start_after = now() where name = ${jobName} and data ->> 'request_id' = ${requestId} and state = 'created'`,
  )
}

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
