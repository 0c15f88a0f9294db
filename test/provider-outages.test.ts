import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { REMOVE_SUBUSER_JOB } from '../src/modules/email/jobs.js'
import { PURGE_REMOVED_FUNNELS_JOB } from '../src/modules/funnels/jobs.js'
import { CAPTURE_LEAD_JOB, UNSUBSCRIBE_PAGE_JOB } from '../src/modules/leads/jobs.js'
import { captureBackoffMs, MAX_CAPTURE_ATTEMPTS } from '../src/modules/leads/lead-capture.service.js'
import { FOLLOW_UP_JOB, SEND_REQUEST_JOB } from '../src/modules/reviews/jobs.js'
import { FAKE_PURGE_PATH, startFakeEdgePurgeApi } from './fakes/edge-purge-api.js'
import { startFakeTwilio } from './fakes/twilio.js'
import { adminHeaders, type TestApp } from './helpers/app.js'
import type { Tenant } from './helpers/fixtures.js'
import { funnelCall, seedFunnel } from './helpers/funnels.js'
import { eventually, rowsOf } from './helpers/jobs.js'
import {
  emailFor,
  graphLead,
  type LeadsPage,
  leadEvent,
  leadsEnv,
  seller,
  signedLeadPost,
  storedLead,
} from './helpers/leads.js'
import {
  chargeFor,
  createReviewTemplate,
  putConfiguration,
  REVIEW_CONFIGURATION,
  requestsOf,
  reviewingTenant,
  stripePost,
} from './helpers/reviews.js'
import { test as base } from './helpers/tenant-test.js'

const PARENT_KEY = 'SG.parent-key-outages'
const ACCOUNT_SID = `AC${'7'.repeat(32)}`
const AUTH_TOKEN = 'twilio-auth-token-outages'
const EDGE_TOKEN = 'edge-api-token-outages'
const STRIPE_SECRET = 'whsec_test_provider_outages'
const METRICS_TOKEN = 'metrics-token-outages'
/**
 * A circuit opens after 3 failures and lets a call test the provider 1 s later; calls time out at 2 s. Not
 * less: under the gate's load a fake's answer took over 500 ms, so each test call after the outage failed
 * again and a lead was still waiting when the recovery's 20 s ran out.
 */
const FAILURES = 3

const test = base
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend('twilio', { scope: 'file' }, async ({}, { onCleanup }) => {
    const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN })
    onCleanup(() => fake.close())
    return fake
  })
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
  .extend('edgePurge', { scope: 'file' }, async ({}, { onCleanup }) => {
    const fake = await startFakeEdgePurgeApi({ apiToken: EDGE_TOKEN })
    onCleanup(() => fake.close())
    return fake
  })
test.override('sendgridOptions', { apiKeys: [PARENT_KEY] })
test.override('appEnv', ({ sendgrid, twilio, edgePurge, graph }) => ({
  ...leadsEnv(graph.url),
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: PARENT_KEY,
  SENDGRID_BASE_URL: sendgrid.url,
  SMS_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: ACCOUNT_SID,
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  TWILIO_FROM: '+15005550006',
  TWILIO_BASE_URL: twilio.url,
  EDGE_PURGE_URL: `${edgePurge.url}${FAKE_PURGE_PATH}`,
  EDGE_API_TOKEN: EDGE_TOKEN,
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  METRICS_TOKEN,
  PROVIDER_CIRCUIT_FAILURES: String(FAILURES),
  PROVIDER_CIRCUIT_HALF_OPEN_AFTER_MS: '1000',
  PROVIDER_TIMEOUT_MS: '2000',
}))

/** `provider_circuit_state` of the provider in `/metrics`: 0 closed, 1 half-open, 2 open. */
async function circuitState(t: TestApp, provider: string): Promise<number> {
  const response = await t.app.inject({
    url: '/metrics',
    headers: { authorization: `Bearer ${METRICS_TOKEN}` },
  })
  const line = response.body
    .split('\n')
    .find((l) => l.startsWith(`provider_circuit_state{provider="${provider}"}`))
  return Number(line?.split(' ').at(-1))
}

interface JobRow {
  id: string
  state: string
  retry_count: number
  started_on: Date | null
  waiting: boolean
}

/** The jobs `name` holds whose data has `field` in `values`: state, retries spent, whether waiting for later. */
async function jobsOf(t: TestApp, name: string, field: string, values: string[]): Promise<JobRow[]> {
  const result = await t.app.platform.db.execute(
    sql`select id, state, retry_count, started_on, start_after > now() as waiting from jobs.job
      where name = ${name} and data ->> ${field} in ${sql.raw(`(${values.map((v) => `'${v}'`).join(',')})`)}`,
  )
  return rowsOf<JobRow>(result)
}

/** Makes every waiting job of `name` (new, or back for a retry) due now: no sleeping through backoff. */
const makeDue = (t: TestApp, name: string) =>
  t.app.platform.db.execute(
    sql`update jobs.job set start_after = now() where name = ${name} and state in ('created', 'retry')`,
  )

/** Waits until each of the jobs has run and waits again, for later: none due, none running. */
const allWaitingAgain = (t: TestApp, name: string, field: string, values: string[]) =>
  eventually(async () => {
    const jobs = await jobsOf(t, name, field, values)
    expect(jobs).toHaveLength(values.length)
    for (const job of jobs)
      expect(job).toMatchObject({ state: expect.stringMatching(/created|retry/), waiting: true })
    return jobs
  })

describe('a provider failing for a long time', () => {
  test("every job that calls a provider retries for more than an hour before it fails (pg-boss's backoff)", async ({
    t,
  }) => {
    const jobs = [
      SEND_REQUEST_JOB,
      FOLLOW_UP_JOB,
      REMOVE_SUBUSER_JOB,
      UNSUBSCRIBE_PAGE_JOB,
      PURGE_REMOVED_FUNNELS_JOB,
    ]
    const result = await t.app.platform.db.execute(
      sql`select name, retry_limit, retry_delay, retry_backoff from jobs.queue
        where name in ${sql.raw(`(${jobs.map((name) => `'${name}'`).join(',')})`)}`,
    )
    const queues = rowsOf<{ name: string; retry_limit: number; retry_delay: number; retry_backoff: boolean }>(
      result,
    )
    expect(queues.map((queue) => queue.name).sort()).toEqual([...jobs].sort())
    for (const queue of queues) {
      // pg-boss 10 waits retry_delay * 2^(n-1) * (1 + random()) before the nth retry: at least this in all.
      expect(queue.retry_backoff).toBe(true)
      const shortestSpan = queue.retry_delay * (2 ** queue.retry_limit - 1)
      expect(shortestSpan, queue.name).toBeGreaterThan(3600)
    }
    // A lead's capture keeps its own schedule of fetches (the job re-queues itself).
    let captureSpanMs = 0
    for (let attempt = 1; attempt < MAX_CAPTURE_ATTEMPTS; attempt++)
      captureSpanMs += captureBackoffMs(attempt)
    expect(captureSpanMs).toBeGreaterThan(3_600_000)
  })

  test('SendGrid answering 5xx: sends answer 503 with Retry-After while its circuit is open, and a keyed send happens once when it returns', async ({
    t,
    owner,
    sendgrid,
  }) => {
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 10 },
    })
    const subject = `outage-${Date.now()}`
    const send = () =>
      t.app.inject({
        method: 'POST',
        url: '/v1/e/mailprovider/mail',
        headers: { ...owner.headers, 'idempotency-key': subject },
        payload: {
          subject,
          sender: { email: 'agency@example.com', name: 'Agency' },
          recipients: [{ email: 'lead@example.com', name: 'Lead' }],
          content: [{ type: 'text/plain', value: 'Hello' }],
          origin: 'campaign',
        },
      })
    sendgrid.fail({ status: 503 })
    // The send's three attempts fail: the circuit opens on the third.
    const first = await send()
    expect(first.statusCode, first.body).toBe(502)
    expect(sendgrid.refused).toHaveLength(FAILURES)
    expect(await circuitState(t, 'sendgrid')).toBe(2)

    const refused = await send()
    expect(refused.statusCode).toBe(503)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(refused.json()).toMatchObject({ success: false, errno: 503 })
    // Refused here, without a call to SendGrid.
    expect(sendgrid.refused).toHaveLength(FAILURES)

    sendgrid.recover()
    const sent = await eventually(async () => {
      const response = await send()
      expect(response.statusCode).toBe(200)
      return response
    })
    expect((await send()).json().data._id).toBe(sent.json().data._id)
    const delivered = [...sendgrid.messages.values()].filter((message) => message.body.subject === subject)
    expect(delivered).toHaveLength(1)
    expect(await circuitState(t, 'sendgrid')).toBe(0)
  })
})

/** A tenant that asks for reviews by SMS, and `count` review requests of it scheduled; their ids. */
async function scheduledSmsRequests(t: TestApp, count: number): Promise<{ tenant: Tenant; ids: string[] }> {
  const settings = { ...REVIEW_CONFIGURATION, send_method: 'sms', delay_hours: 1 }
  const tenant = await reviewingTenant(t, settings)
  const templateId = await createReviewTemplate(t, tenant, {
    channel: 'sms',
    body: 'Thanks! {{review.link}}',
  })
  expect((await putConfiguration(t, tenant, { ...settings, template_id: templateId })).statusCode).toBe(200)
  for (let i = 0; i < count; i++) {
    const charge = chargeFor(tenant, { name: `Customer ${i}`, phone: `+1415556${String(1000 + i)}` })
    expect((await t.app.inject(stripePost(STRIPE_SECRET, charge))).statusCode).toBe(200)
  }
  const requests = await eventually(async () => {
    const listed = await requestsOf(t, tenant, 'limit=100')
    expect(listed.filter((request) => request.status === 'scheduled')).toHaveLength(count)
    return listed
  })
  return { tenant, ids: requests.map((request) => request._id) }
}

describe('Twilio timing out', () => {
  test('review SMS jobs fail fast and are deferred while its circuit is open, spending no retries, and each text goes once when it returns', async ({
    t,
    twilio,
  }) => {
    const { tenant, ids } = await scheduledSmsRequests(t, 5)
    twilio.fail('hang')
    const rounds = 4
    for (let round = 0; round < rounds; round++) {
      await makeDue(t, SEND_REQUEST_JOB)
      await allWaitingAgain(t, SEND_REQUEST_JOB, 'request_id', ids)
    }
    expect(await circuitState(t, 'twilio')).toBe(2)
    // Each job ran every round, but calls reached Twilio only until its circuit opened, then once a second.
    const calls = twilio.refused.length
    expect(calls).toBeGreaterThanOrEqual(FAILURES)
    expect(calls).toBeLessThan(ids.length * rounds)
    // A retry is spent only by a call that failed; a refused run leaves the job as never started.
    const jobs = await jobsOf(t, SEND_REQUEST_JOB, 'request_id', ids)
    const spent = jobs.reduce((sum, job) => sum + job.retry_count + (job.started_on ? 1 : 0), 0)
    expect(spent).toBeLessThanOrEqual(calls)
    expect(
      (await requestsOf(t, tenant, 'limit=100')).every((request) => request.status === 'scheduled'),
    ).toBe(true)

    twilio.recover()
    await eventually(
      async () => {
        await makeDue(t, SEND_REQUEST_JOB)
        const listed = await requestsOf(t, tenant, 'limit=100')
        expect(listed.map((request) => request.status)).toEqual(ids.map(() => 'sent'))
      },
      { timeout: 20_000, interval: 500 },
    )
    const phones = ids.map((_, i) => `+1415556${String(1000 + i)}`).sort()
    expect(
      twilio.messages
        .filter((message) => phones.includes(message.to))
        .map((m) => m.to)
        .sort(),
    ).toEqual(phones)
    const stored = await t.app.platform.db.execute(
      sql`select "to" from review_sms_messages where account_id = ${tenant.accountId} order by "to"`,
    )
    expect(rowsOf<{ to: string }>(stored).map((row) => row.to)).toEqual(phones)
    expect(await circuitState(t, 'twilio')).toBe(0)
  })
})

describe("Meta's Graph API answering 5xx", () => {
  /** Meta's event for the lead, signed and posted. */
  async function deliver(t: TestApp, page: LeadsPage, leadgenId: string) {
    const event = leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }])
    expect((await t.app.inject(signedLeadPost(event))).body).toBe('EVENT_RECEIVED')
  }

  test('lead captures wait while its circuit is open and each lead is captured once, into one contact, when it returns', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const emails = [1, 2, 3, 4].map((n) => emailFor(`outage-${n}`))
    const leadgenIds = emails.map((email) => graphLead(graph, page, { full_name: 'Lead', email }))
    graph.fail({ status: 500 })
    for (const leadgenId of leadgenIds) await deliver(t, page, leadgenId)
    const leadIds = await eventually(async () =>
      Promise.all(leadgenIds.map(async (id) => (await storedLead(t, id)).id)),
    )
    await allWaitingAgain(t, CAPTURE_LEAD_JOB, 'lead_id', leadIds)
    expect(await circuitState(t, 'graph')).toBe(2)
    for (const leadgenId of leadgenIds) expect((await storedLead(t, leadgenId)).status).not.toBe('captured')

    graph.recover()
    await eventually(
      async () => {
        await makeDue(t, CAPTURE_LEAD_JOB)
        for (const leadgenId of leadgenIds) expect((await storedLead(t, leadgenId)).status).toBe('captured')
      },
      { timeout: 20_000, interval: 500 },
    )
    for (const email of emails) {
      const contacts = await t.app.inject({
        url: `/v1/contacts?search=${encodeURIComponent(email)}`,
        headers: owner.headers,
      })
      expect(contacts.json().data, email).toHaveLength(1)
    }
    // One successful fetch per lead: what Graph answered during the outage was never captured.
    const answered = graph.requests.filter((request) => !graph.refused.includes(request))
    for (const leadgenId of leadgenIds)
      expect(answered.filter((request) => request.url.split('?')[0]?.endsWith(`/${leadgenId}`))).toHaveLength(
        1,
      )
    expect(await circuitState(t, 'graph')).toBe(0)
  })
})

describe("the edge provider's purge API answering 5xx", () => {
  test('purges answer 503 with Retry-After at once while its circuit is open, and go through once it returns', async ({
    t,
    owner,
    edgePurge,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const purge = () => funnelCall(t.app, owner, 'DELETE', `/${funnelId}/cache`)
    edgePurge.fail({ status: 502 })
    expect((await purge()).statusCode).toBe(502)
    expect(edgePurge.refused).toHaveLength(FAILURES)
    const refused = await purge()
    expect(refused.statusCode).toBe(503)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    expect(edgePurge.refused).toHaveLength(FAILURES)

    edgePurge.recover()
    const before = edgePurge.purges.length
    await eventually(async () => expect((await purge()).statusCode).toBe(200))
    expect(edgePurge.purges.slice(before)).toEqual([{ tags: [`funnel-${funnelId}`] }])
    expect(await circuitState(t, 'edge')).toBe(0)
  })
})
