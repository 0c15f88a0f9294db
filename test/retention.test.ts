import { randomBytes } from 'node:crypto'
import { type SQL, sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { lowestIdAt } from '../src/platform/db/ids.js'
import { RETENTION_JOB } from '../src/platform/jobs/retention.js'
import { startFakeServer } from './fakes/http-server.js'
import { adminHeaders, type TestApp } from './helpers/app.js'
import type { Tenant } from './helpers/fixtures.js'
import { seedFunnel } from './helpers/funnels.js'
import { eventually, rowsOf } from './helpers/jobs.js'
import { graphId, leadEvent, leadsEnv, signedLeadPost } from './helpers/leads.js'
import { createUser, obtainCode, obtainTokens, registerApp, tokenRequest } from './helpers/oauth.js'
import { chargeFor, reviewingTenant, stripePost } from './helpers/reviews.js'
import { test } from './helpers/tenant-test.js'

const STRIPE_SECRET = 'whsec_test_retention_secret'
/** Every event table's period: an hour (the shortest short-link clicks take). */
const PERIOD = '1 hour'
const PERIODS = Object.fromEntries(
  [
    'MAIL_EVENT_BATCHES_RETENTION',
    'REVIEW_WEBHOOK_EVENTS_RETENTION',
    'LEAD_WEBHOOK_EVENTS_RETENTION',
    'OAUTH_AUDIT_EVENTS_RETENTION',
    'OAUTH_CODES_RETENTION',
    'OAUTH_REFRESH_TOKENS_RETENTION',
    'APP_WEBHOOK_DELIVERIES_RETENTION',
    'SHORT_LINK_CLICKS_RETENTION',
    'JOBS_COMPLETED_RETENTION',
    'JOBS_ARCHIVE_RETENTION',
  ].map((name) => [name, '1h']),
)
test.override('appEnv', ({ graph }) => ({
  ...leadsEnv(graph.url),
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  ...PERIODS,
}))

/**
 * Each event table, how to copy its rows as if written earlier (its times, the columns that must stay
 * unique), and which rows past the period must stay all the same: `kept`, in plain SQL, and `keptCopy`,
 * the changes making an old copy one of them.
 */
interface EventTable {
  table: string
  times: string[]
  unique?: string[]
  kept: string
  keptCopy?: Record<string, string>
}

const EVENT_TABLES: EventTable[] = [
  {
    table: 'mail_event_batches',
    times: ['received_at', 'processed_at'],
    kept: 'processed_at is null',
    keptCopy: { processed_at: 'null' },
  },
  {
    table: 'review_webhook_events',
    times: ['created_at', 'processed_at'],
    unique: ['event_id'],
    // Still waiting, or the source of a review request (customer data, which points at it).
    kept: "status = 'received' or exists (select 1 from review_requests r where r.event_id = review_webhook_events.id)",
    keptCopy: { status: "'received'", processed_at: 'null' },
  },
  {
    table: 'lead_webhook_events',
    times: ['created_at', 'processed_at'],
    kept: 'processed_at is null',
    keptCopy: { processed_at: 'null' },
  },
  { table: 'oauth_audit_events', times: ['created_at'], kept: 'false' },
  {
    table: 'oauth_codes',
    times: ['created_at', 'expires_at', 'used_at'],
    unique: ['code_hash'],
    kept: `expires_at >= now() - interval '${PERIOD}'`,
  },
  {
    table: 'oauth_refresh_tokens',
    times: ['created_at', 'expires_at', 'replaced_at', 'revoked_at', 'last_used'],
    unique: ['token_hash'],
    // Live (not revoked, not expired), or revoked within the period: a reuse must still be recognised.
    kept: `coalesce(revoked_at, expires_at) >= now() - interval '${PERIOD}' and expires_at >= now() - interval '${PERIOD}'`,
    keptCopy: { revoked_at: "now() - interval '30 minutes'" },
  },
  {
    table: 'oauth_webhook_deliveries',
    times: ['created_at', 'updated_at', 'next_attempt_at', 'leased_until'],
    // Still to be sent, or touched (replayed) within the period: the app's developer may still replay it.
    kept: `status in ('pending', 'retrying') or updated_at >= now() - interval '${PERIOD}'`,
    // Waiting for a retry a day away, so that no sender touches it meanwhile.
    keptCopy: { status: "'retrying'", next_attempt_at: "now() + interval '1 day'" },
  },
  { table: 'funnel_short_link_clicks', times: ['clicked_at'], kept: 'false' },
]

/** Customer data: retention never removes it, and it has no setting. */
const CUSTOMER_TABLES = ['contacts', 'communications', 'communication_events', 'leads', 'review_requests']

const execute = async <T>(t: TestApp, statement: SQL) => rowsOf<T>(await t.app.platform.db.execute(statement))
const countOf = async (t: TestApp, table: string, where = 'true') =>
  (await execute<{ n: number }>(t, sql.raw(`select count(*)::int as n from ${table} where ${where}`)))[0]?.n

/**
 * Copies of the rows written since `since` as if written `age` ago: the id's time and every time column
 * taken back by it, unique columns made different; `changes` set other columns.
 */
async function copyAged(t: TestApp, spec: EventTable, since: Date, age: string, changes = {}) {
  const columns = await execute<{ name: string }>(
    t,
    sql`select column_name as name from information_schema.columns
      where table_schema = current_schema() and table_name = ${spec.table} and is_generated = 'NEVER'`,
  )
  const tag = randomBytes(4).toString('hex')
  const value = (column: string) =>
    (changes as Record<string, string>)[column] ??
    (column === 'id'
      ? `lpad(to_hex(extract(epoch from now() - interval '${age}')::bigint), 8, '0') || substr(md5(id || '${tag}'), 1, 16)`
      : spec.times.includes(column)
        ? `${column} - interval '${age}'`
        : spec.unique?.includes(column)
          ? `${column} || '~${tag}'`
          : column)
  const names = columns.map((column) => column.name)
  await t.app.platform.db.execute(
    sql.raw(`insert into ${spec.table} (${names.join(', ')})
      select ${names.map(value).join(', ')} from ${spec.table} where id >= '${lowestIdAt(since)}'`),
  )
}

/** Each event table's rows: those written before the period (and of them, those that must stay), and the rest. */
async function eventRows(t: TestApp) {
  const past = `id < '${lowestIdAt(new Date(Date.now() - 3_600_000))}'`
  const rows: Record<string, { past: number; pastKept: number; younger: number }> = {}
  for (const { table, kept } of EVENT_TABLES) {
    rows[table] = {
      past: (await countOf(t, table, past)) as number,
      pastKept: (await countOf(t, table, `${past} and (${kept})`)) as number,
      younger: (await countOf(t, table, `not (${past})`)) as number,
    }
  }
  return rows
}

const customerRows = async (t: TestApp): Promise<Record<string, number>> =>
  Object.fromEntries(
    await Promise.all(CUSTOMER_TABLES.map(async (table) => [table, (await countOf(t, table)) as number])),
  )

/** Sends an email to a contact and posts a delivery event for it (a batch, processed by its job). */
async function sendAndDeliver(t: TestApp, tenant: Tenant) {
  const admin = (path: string, payload: object) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${tenant.accountId}${path}`,
      headers: adminHeaders,
      payload,
    })
  await admin('/credits', { amount: 10 })
  await admin('/contacts', { email: 'lead@example.com', name: 'Lea' })
  const sent = await t.app.inject({
    method: 'POST',
    url: '/v1/e/mailprovider/mail',
    headers: tenant.headers,
    payload: {
      subject: 'Hello',
      sender: { email: 'agency@example.com' },
      recipients: [{ email: 'lead@example.com' }],
      content: [{ type: 'text/plain', value: 'Hello' }],
      origin: 'campaign',
    },
  })
  expect(sent.statusCode).toBe(200)
  const delivered = await t.app.inject({
    method: 'POST',
    url: '/v1/e/mailprovider/webhook',
    payload: [
      {
        email: 'lead@example.com',
        timestamp: Math.floor(Date.now() / 1000),
        event: 'delivered',
        sg_event_id: `ev-${randomBytes(8).toString('hex')}`,
        sg_message_id: `${sent.json().data.msgID}.filter-1`,
      },
    ],
  })
  expect(delivered.statusCode).toBe(200)
}

/**
 * Tokens through the pages and /token, refreshed twice: one token revoked, one replaced, one live. The app
 * is told of the account's contacts at `webhookUrl`.
 */
async function grantAndRefresh(t: TestApp, tenant: Tenant, webhookUrl: string) {
  const client = await registerApp(t.app, { webhook_url: webhookUrl })
  const email = `retention-${graphId()}@example.com`
  await createUser(t.app, email, [tenant.accountId])
  let tokens = await obtainTokens(t.app, client, email)
  for (let refresh = 0; refresh < 2; refresh++) {
    const response = await tokenRequest(
      t.app,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      [client._id, client.client_secret],
    )
    tokens = response.json()
  }
  await obtainCode(t.app, client, email) // never exchanged
}

async function clickShortLink(t: TestApp, tenant: Tenant) {
  const { funnelId } = await seedFunnel(t.app, tenant)
  const shortened = await t.app.inject({
    method: 'POST',
    url: `/v1/funnels/shorten?funnel_id=${funnelId}`,
    headers: tenant.headers,
  })
  const code = (shortened.json().data as string).split('/s/')[1]
  const followed = await t.app.inject({ url: `/s/${code}`, headers: { 'user-agent': 'Mozilla/5.0' } })
  expect(followed.statusCode).toBe(302)
}

describe('retention of the event tables', () => {
  test.beforeAll(async ({ t }) => {
    // The test runs retention itself; the sweeps requeuing events that still wait would apply the old
    // copies made to wait, so neither runs on its own here.
    await execute(
      t,
      sql`delete from jobs.schedule where name in ${[RETENTION_JOB, 'reviews.requeue-received-events', 'leads.requeue-lead-events']}`,
    )
  })

  test('deletes the rows past their period that are done with, in every event table, and nothing else', async ({
    t,
    owner,
  }) => {
    const since = new Date()
    await sendAndDeliver(t, owner)
    const reviewing = await reviewingTenant(t)
    expect(
      (await t.app.inject(stripePost(STRIPE_SECRET, chargeFor(reviewing, { email: 'ann@example.com' }))))
        .statusCode,
    ).toBe(200)
    const lead = leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }])
    expect((await t.app.inject(signedLeadPost(lead))).statusCode).toBe(200)
    const receiver = await startFakeServer((_, response) => response.end())
    await grantAndRefresh(t, owner, receiver.url)
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/contacts`,
      headers: adminHeaders,
      payload: { email: 'told@example.com' },
    })
    await clickShortLink(t, owner)
    // Every webhook event applied by its job, and the app told of the contact.
    await eventually(async () => {
      for (const table of ['mail_event_batches', 'review_webhook_events', 'lead_webhook_events'])
        expect(await countOf(t, table, 'processed_at is null')).toBe(0)
      expect(await countOf(t, 'oauth_webhook_deliveries', "status = 'succeeded'")).toBe(1)
    })
    await receiver.close()

    for (const spec of EVENT_TABLES) {
      await copyAged(t, spec, since, '30 minutes')
      await copyAged(t, spec, since, '2 hours')
      if (spec.keptCopy) await copyAged(t, spec, since, '2 hours', spec.keptCopy)
    }
    // A review request made from an event past its period: the event stays while the request points at it.
    await copyAged(
      t,
      EVENT_TABLES.find((spec) => spec.table === 'review_webhook_events') as EventTable,
      since,
      '3 hours',
    )
    const [past] = await execute<{ id: string }>(
      t,
      sql.raw(`update review_requests r set event_id = (select aged.id from review_webhook_events aged
        where aged.account_id = r.account_id and aged.status <> 'received'
          and aged.id < '${lowestIdAt(new Date(Date.now() - 3_600_000))}' order by aged.id limit 1)
        where r.id = (select min(id) from review_requests) returning event_id as id`),
    )
    expect(past?.id).toBeDefined()
    const before = await eventRows(t)
    const customers = await customerRows(t)
    // Every table holds rows past the period that may go, and some that must stay.
    for (const [table, rows] of Object.entries(before)) {
      expect(rows.past - rows.pastKept, table).toBeGreaterThan(0)
      expect(rows.younger, table).toBeGreaterThan(0)
    }
    expect(Object.values(customers).every((n) => n > 0)).toBe(true)

    const deleted = await t.app.platform.retention.runOnce()

    const after = await eventRows(t)
    expect(after).toEqual(
      Object.fromEntries(
        Object.entries(before).map(([table, rows]) => [
          table,
          { past: rows.pastKept, pastKept: rows.pastKept, younger: rows.younger },
        ]),
      ),
    )
    expect(deleted).toEqual(
      Object.fromEntries(Object.entries(before).map(([table, rows]) => [table, rows.past - rows.pastKept])),
    )
    expect(await customerRows(t)).toEqual(customers)
    // The grant's live token answers as before.
    expect(
      await countOf(t, 'oauth_refresh_tokens', 'revoked_at is null and replaced_at is null'),
    ).toBeGreaterThan(0)
  })

  test("hands pg-boss the finished jobs' period: a finished job is deleted after it (pg-boss 12 has no archive)", async ({
    t,
  }) => {
    const since = new Date()
    for (let batch = 0; batch < 2; batch++) {
      const posted = await t.app.inject({
        method: 'POST',
        url: '/v1/e/mailprovider/webhook',
        payload: [{ event: 'processed', email: 'a@example.com', timestamp: 1, sg_event_id: `ev-${batch}` }],
      })
      expect(posted.statusCode).toBe(200)
    }
    const finished = await eventually(async () => {
      const jobs = await execute<{ id: string }>(
        t,
        sql`select id from jobs.job where state = 'completed' and created_on >= ${since.toISOString()}::timestamptz`,
      )
      expect(jobs).toHaveLength(2)
      return jobs
    })
    const [old, recent] = finished.map((job) => job.id)
    await execute(
      t,
      sql`update jobs.job set completed_on = now() - interval '2 hours' where id = ${old}::uuid`,
    )
    await execute(
      t,
      sql`update jobs.job set completed_on = now() - interval '30 minutes' where id = ${recent}::uuid`,
    )
    // pg-boss deletes at most once per maintenance interval per queue: the claim of a pass is let go.
    await execute(t, sql`update jobs.queue set maintain_on = null`)
    await t.app.platform.queue.maintain()
    const where = (id: string | undefined) =>
      sql`select exists (select 1 from jobs.job where id = ${id}::uuid) as kept`
    expect(await execute(t, where(old))).toEqual([{ kept: false }])
    expect(await execute(t, where(recent))).toEqual([{ kept: true }])
  })
})
