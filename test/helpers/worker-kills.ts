import { spawn } from 'node:child_process'
import { randomInt } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { type FakeGraphApi, startFakeGraphApi } from '../fakes/graph-api.js'
import { type FakeServer, startFakeServer } from '../fakes/http-server.js'
import { type FakeSendgrid, startFakeSendgrid } from '../fakes/sendgrid.js'
import { type FakeTwilio, startFakeTwilio } from '../fakes/twilio.js'
import { adminHeaders, TEST_ADMIN_TOKEN, TEST_JWT_SECRET, type TestApp } from './app.js'
import type { Tenant } from './fixtures.js'
import { rowsOf } from './jobs.js'
import {
  createLeadCampaign,
  graphId,
  graphLead,
  LEADS_APP,
  leadEvent,
  leadsEnv,
  signedLeadPost,
  storeLeadsToken,
} from './leads.js'
import { createUser, obtainTokens, registerApp } from './oauth.js'
import { type WatchedProcess, watchProcess } from './processes.js'
import { chargeFor, reviewingTenant, stripePost } from './reviews.js'

/**
 * The kill rig: an API that runs no jobs, two worker processes (`src/worker.ts`, what `npm run
 * worker` runs) on one PostgreSQL database, and fake SendGrid, Twilio, Graph and an app's webhook receiver.
 * A stream of review webhooks, lead webhooks and contact changes goes in while the workers are SIGKILLed
 * at random moments, each time while a job runs, and started again; then every expected email, SMS, lead capture and app webhook is
 * counted where it landed.
 */
export interface WorkerKillsOptions {
  /** Stripe charges, each a review request sent by email and SMS. */
  reviews: number
  /** Meta leads, each captured into a contact. */
  leads: number
  /** Contacts created through the API. */
  contacts: number
  /** How many times a worker is killed. */
  kills: number
  /** JOBS_LOCK_SECONDS of every process. */
  lockSeconds: number
  /** How long every effect gets to land after the last kill. */
  settleTimeoutMs: number
}

/** For each kind of effect: how many were expected, and how many of them landed none, once or more. */
export interface EffectCount {
  expected: number
  once: number
  missing: number
  duplicated: number
}

export interface WorkerKillsResult {
  emails: EffectCount
  sms: EffectCount
  leadCaptures: EffectCount
  /** Counted by distinct `webhook-id` per contact, as a Standard Webhooks receiver deduplicates. */
  appWebhooks: EffectCount & { deliveries: number }
  kills: number
  /** The stream's jobs that ran more than once. */
  retriedJobs: number
  /** How often a retry asked Twilio and SendGrid whether a dead attempt's message had arrived. */
  providerLookups: { twilio: number; sendgrid: number }
  /** Jobs still queued, retrying or running when everything had landed (or the wait ended). */
  unfinishedJobs: { name: string; state: string; count: number }[]
  /** From the first kill until every effect landed and no job was left. */
  settledMs: number
}

const STRIPE_SECRET = 'whsec_worker_kills'
const SENDGRID_KEY = 'SG.worker-kills'
const TWILIO = { accountSid: `AC${'7'.repeat(32)}`, authToken: 'worker-kills-twilio-token' }
/** Up to this long (ms, at random) before a fake provider handles a request. */
const PROVIDER_LATENCY_MS = 300
/** The queues the stream's work goes through. */
const STREAM_QUEUES = [
  'reviews.webhook-event',
  'reviews.send-request',
  'leads.webhook-event',
  'leads.capture-lead',
]

export interface WorkerKillsRig {
  /** The environment of the API and of both workers (the API adds RUN_WORKERS=false). */
  env: Record<string, string>
  close(): Promise<void>
  run(t: TestApp, options: WorkerKillsOptions): Promise<WorkerKillsResult>
}

export async function startWorkerKillsRig(): Promise<WorkerKillsRig> {
  // Providers that take a while to answer, so that kills land in the middle of their calls too.
  const latency = { latencyMs: PROVIDER_LATENCY_MS }
  const sendgrid = await startFakeSendgrid({ apiKeys: [SENDGRID_KEY], ...latency })
  const twilio = await startFakeTwilio({ ...TWILIO, ...latency })
  const graph = await startFakeGraphApi({
    appId: LEADS_APP.appId,
    appSecret: LEADS_APP.appSecret,
    ...latency,
  })
  const receiver = await startFakeServer((_, response) => response.end(), latency)
  const env = {
    NODE_ENV: 'test',
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    // Every process opens the secrets the API sealed (Meta tokens, apps' webhook secrets).
    SECRETS_ENCRYPTION_KEY: '7'.repeat(64),
    JOBS_POLLING_INTERVAL_SECONDS: '0.5',
    MAIL_PROVIDER: 'sendgrid',
    SENDGRID_API_KEY: SENDGRID_KEY,
    SENDGRID_BASE_URL: sendgrid.url,
    SMS_PROVIDER: 'twilio',
    TWILIO_ACCOUNT_SID: TWILIO.accountSid,
    TWILIO_AUTH_TOKEN: TWILIO.authToken,
    TWILIO_FROM: '+15005550006',
    TWILIO_BASE_URL: twilio.url,
    STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
    RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
    APP_WEBHOOK_RETRY_SCHEDULE: '1s,1s,2s,2s,5s,5s',
    ...leadsEnv(graph.url),
  }
  return {
    env,
    close: async () => {
      await Promise.all([sendgrid.close(), twilio.close(), graph.close(), receiver.close()])
    },
    run: (t, options) => runWorkerKills(t, { sendgrid, twilio, graph, receiver }, env, options),
  }
}

interface Fakes {
  sendgrid: FakeSendgrid
  twilio: FakeTwilio
  graph: FakeGraphApi
  receiver: FakeServer
}

/** A worker process, as `npm run worker` starts one, on the API's database. */
async function startWorker(env: Record<string, string>, databaseUrl: string): Promise<WatchedProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/worker.ts'], {
    // Warnings too: a worker's failures are in the output the test prints when it fails.
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      DATABASE_URL: databaseUrl,
      DATA_DIR: tempDir(),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const worker = watchProcess(child)
  await worker.printed('Job workers started', 60_000)
  return worker
}

const tempDir = () => mkdtempSync(join(tmpdir(), 'platform-worker-kills-'))
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** How often each expected key occurs among `landed`. */
function countOf(expected: string[], landed: string[]): EffectCount {
  const times = new Map<string, number>()
  for (const key of landed) times.set(key, (times.get(key) ?? 0) + 1)
  const of = (key: string) => times.get(key) ?? 0
  return {
    expected: expected.length,
    once: expected.filter((key) => of(key) === 1).length,
    missing: expected.filter((key) => of(key) === 0).length,
    duplicated: expected.filter((key) => of(key) > 1).length,
  }
}

const allOnce = (count: EffectCount) => count.once === count.expected

async function runWorkerKills(
  t: TestApp,
  fakes: Fakes,
  env: Record<string, string>,
  options: WorkerKillsOptions,
): Promise<WorkerKillsResult> {
  const databaseUrl = t.database.url
  if (!databaseUrl) throw new Error('two worker processes need PostgreSQL (DATABASE_URL)')
  const workerEnv = { ...env, JOBS_LOCK_SECONDS: String(options.lockSeconds) }
  const workers = await Promise.all([
    startWorker(workerEnv, databaseUrl),
    startWorker(workerEnv, databaseUrl),
  ])
  try {
    const tenant = await reviewingTenant(t, { send_method: 'both', delay_hours: 0 })
    await grantCredits(t, tenant, options.reviews + options.contacts)
    await authorizeListeningApp(t, tenant, fakes.receiver)
    const page = await leadsPage(t, fakes.graph, tenant)

    let kills = 0
    const killing = (async () => {
      for (; kills < options.kills; kills++) {
        await sleep(300 + randomInt(1_200))
        // A kill between jobs proves nothing: on a fast machine the stream can be done before the kills.
        await untilAJobRuns(t, 5_000)
        // Every worker: which one holds the running job is not known, and killing only the other one cut
        // nothing short (the test then saw no job run again, two runs in five).
        for (const victim of workers) victim.child.kill('SIGKILL')
        await Promise.all(workers.map((victim) => victim.exited))
        workers.splice(
          0,
          workers.length,
          ...(await Promise.all(workers.map(() => startWorker(workerEnv, databaseUrl)))),
        )
      }
    })()
    const started = Date.now()
    const stream = await sendStream(t, fakes, tenant, page, options)
    await killing

    const results = async () => ({
      emails: countOf(
        stream.customers.map((c) => c.email),
        [...fakes.sendgrid.messages.values()].flatMap((m) =>
          m.body.personalizations.map((p) => p.to[0]?.email ?? ''),
        ),
      ),
      sms: countOf(
        stream.customers.map((c) => c.phone),
        fakes.twilio.messages.map((m) => m.to),
      ),
      leadCaptures: countOf(stream.leadEmails, await contactEmails(t, tenant.accountId)),
      appWebhooks: appWebhooksOf(tenant, fakes.receiver, [...stream.leadEmails, ...stream.contactEmails]),
    })
    let counted = await results()
    let unfinished = await unfinishedJobs(t)
    // Polled by hand, not with vitest's waitFor: the bench runs this rig outside vitest.
    for (const deadline = Date.now() + options.settleTimeoutMs; Date.now() < deadline; await sleep(500)) {
      counted = await results()
      unfinished = await unfinishedJobs(t)
      const landed = [counted.emails, counted.sms, counted.leadCaptures, counted.appWebhooks].every(allOnce)
      if (landed && unfinished.length === 0) break
    }
    return {
      ...counted,
      kills,
      retriedJobs: await retriedJobs(t),
      providerLookups: {
        twilio: fakes.twilio.requests.filter((request) => request.method === 'GET').length,
        sendgrid: fakes.sendgrid.received.filter((request) => request.path === '/v3/messages').length,
      },
      unfinishedJobs: unfinished,
      settledMs: Date.now() - started,
    }
  } finally {
    for (const worker of workers) worker.child.kill('SIGKILL')
    await Promise.all(workers.map((worker) => worker.exited))
  }
}

async function grantCredits(t: TestApp, tenant: Tenant, amount: number) {
  await t.app.inject({
    method: 'POST',
    url: `/v1/admin/accounts/${tenant.accountId}/credits`,
    headers: adminHeaders,
    payload: { amount },
  })
}

/** An app with a webhook URL at `receiver`, granted `crm.contacts.read` in the tenant's account. */
async function authorizeListeningApp(t: TestApp, tenant: Tenant, receiver: FakeServer) {
  const app = await registerApp(t.app, {
    scopes: ['crm.contacts.read'],
    webhook_url: `${receiver.url}/contacts`,
  })
  const email = `owner-${tenant.accountId}@kills.example`
  await createUser(t.app, email, [tenant.accountId])
  await obtainTokens(t.app, app, email)
}

/** A page and lead form of the tenant's on Graph, its Meta user token stored, and the campaign claiming them. */
async function leadsPage(t: TestApp, graph: FakeGraphApi, tenant: Tenant) {
  const pageId = graphId()
  const formId = graphId()
  const userToken = `EAAuser${pageId}`
  graph.addUser(userToken, { [pageId]: `EAApage${pageId}` })
  graph.addForm(pageId, { id: formId, name: 'Kill test offer' })
  await storeLeadsToken(t, tenant, userToken)
  await createLeadCampaign(t, tenant, pageId, formId)
  return { pageId, formId }
}

/** Posts every charge, lead event and contact, interleaved, while the workers are being killed. */
async function sendStream(
  t: TestApp,
  fakes: Fakes,
  tenant: Tenant,
  page: { pageId: string; formId: string },
  options: WorkerKillsOptions,
) {
  const run = `${Date.now()}`
  const customers = Array.from({ length: options.reviews }, (_, i) => ({
    email: `customer-${run}-${i}@kills.example`,
    phone: `+1415${run.slice(-3)}${String(i).padStart(4, '0')}`,
  }))
  const leadEmails = Array.from({ length: options.leads }, (_, i) => `lead-${run}-${i}@kills.example`)
  const contactEmails = Array.from(
    { length: options.contacts },
    (_, i) => `contact-${run}-${i}@kills.example`,
  )
  const charges = customers.map(
    (customer) => () => t.app.inject(stripePost(STRIPE_SECRET, chargeFor(tenant, customer))),
  )
  const leads = leadEmails.map((email) => () => {
    const leadgenId = graphLead(fakes.graph, page, { email, full_name: 'Kill Test' })
    return t.app.inject(
      signedLeadPost(leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }])),
    )
  })
  const contacts = contactEmails.map(
    (email) => () =>
      t.app.inject({ method: 'POST', url: '/v1/contacts', headers: tenant.headers, payload: { email } }),
  )
  // Interleaved, so that every kind of job is running when a worker dies.
  const longest = Math.max(charges.length, leads.length, contacts.length)
  const posts = Array.from({ length: longest }, (_, i) => [charges[i], leads[i], contacts[i]]).flat()
  for (const post of posts) {
    if (!post) continue
    const response = await post()
    if (response.statusCode >= 300)
      throw new Error(`stream post answered ${response.statusCode}: ${response.body}`)
    await sleep(randomInt(40))
  }
  return { customers, leadEmails, contactEmails }
}

async function contactEmails(t: TestApp, accountId: string): Promise<string[]> {
  const result = await t.app.platform.db.execute(
    sql`select email from contacts where account_id = ${accountId} and email is not null`,
  )
  return rowsOf<{ email: string }>(result).map((row) => row.email)
}

/** Per contact email, the distinct webhook-ids that told the app of its creation. */
function appWebhooksOf(tenant: Tenant, receiver: FakeServer, emails: string[]) {
  const created = receiver.requests
    .map((request) => ({ id: request.headers['webhook-id'], body: JSON.parse(request.body) }))
    .filter(({ body }) => body.event === 'contact.created' && body.account_id === tenant.accountId)
  const distinct = new Map(created.map(({ id, body }) => [id, body.data.email as string]))
  return { ...countOf(emails, [...distinct.values()]), deliveries: created.length }
}

const streamQueues = sql.join(
  STREAM_QUEUES.map((name) => sql`${name}`),
  sql`, `,
)

/** The stream's jobs still queued, retrying or running, and app webhook deliveries still to make. */
async function unfinishedJobs(t: TestApp) {
  const result = await t.app.platform.db.execute(
    sql`select name, state::text, count(*)::int as count from jobs.job
      where name in (${streamQueues}) and state in ('created', 'retry', 'active') group by name, state
      union all
      select 'app webhook delivery', status, count(*)::int from oauth_webhook_deliveries
      where status in ('pending', 'retrying') group by status`,
  )
  return rowsOf<{ name: string; state: string; count: number }>(result)
}

/** Waits, up to `timeoutMs`, until one of the stream's jobs is running in a worker. */
async function untilAJobRuns(t: TestApp, timeoutMs: number): Promise<void> {
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline; await sleep(50)) {
    const result = await t.app.platform.db.execute(
      sql`select exists (select 1 from jobs.job where name in (${streamQueues}) and state = 'active') as running`,
    )
    if (rowsOf<{ running: boolean }>(result)[0]?.running) return
  }
}

/** The stream's jobs that ran more than once: each a run a kill cut short (or a failure) retried. */
async function retriedJobs(t: TestApp): Promise<number> {
  const result = await t.app.platform.db.execute(
    sql`select count(*)::int as count from jobs.job where name in (${streamQueues}) and retry_count > 0`,
  )
  return rowsOf<{ count: number }>(result)[0]?.count ?? 0
}
