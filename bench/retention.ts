/**
 * `npx tsx bench/retention.ts [--period 60] [--minutes 8] [--rate 60] [--phase 30] [--every 5]`: the event
 * tables under continuous ingest with retention periods of `--period` seconds. The real
 * server runs on a fresh PostgreSQL database as `npm start` does; the bench posts signed SendGrid delivery
 * events, Stripe charges and Meta lead events at `--rate` a second in all, first for one period with
 * retention running (the tables fill to their steady state), then in phases of `--phase` seconds, taking
 * turns, without and with retention. With it, the bench queues the server's own retention job every
 * `--every` seconds (more often than the minute of its cron, so that more requests meet a run); without it,
 * none runs (the cron's schedule is removed for the run). It samples each table's rows and total size every
 * 10 s, and prints the ingest p50 and p99 of each kind of phase, and of the requests sent while a delete
 * statement was running. Last it runs retention once more and checks that nothing younger than its period
 * is gone and nothing older than it is left.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { PgBoss } from 'pg-boss'
import Stripe from 'stripe'
import { leadEvent, signedLeadPost } from '../test/helpers/leads.js'
import { createMember } from './admin.js'
import { registerStop, stopEverything } from './children.js'
import { latencyPercentile, newLatencyHistogram, recordLatency } from './latency.js'
import { loadLine, sampleMachine } from './machine.js'
import { VIA_TLS_PROXY } from './scenario.js'
import { REPO_ROOT, startServer } from './servers.js'
import { prepareStart, readStartCommand } from './start-command.js'

const RETENTION_JOB = 'platform.retention'
const SAMPLE_MS = 10_000
const ACTIVITY_POLL_MS = 50
const EVENTS_PER_BATCH = 20
const MAX_IN_FLIGHT = 64

const STRIPE_SECRET = `whsec_${randomBytes(24).toString('base64url')}`
const LEADS_SECRET = randomBytes(16).toString('hex')
const SENDGRID_KEYS = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })

/** The tables ingest fills, with the column their period counts from. */
const TABLES = [
  { table: 'mail_event_batches', time: 'received_at' },
  { table: 'review_webhook_events', time: 'created_at' },
  { table: 'lead_webhook_events', time: 'created_at' },
  // pg-boss 12 keeps finished jobs here until it deletes them (it has no archive any more).
  { table: 'jobs.job', time: 'created_on' },
] as const

type Kind = 'delivery' | 'stripe' | 'lead'
const KINDS: Kind[] = ['delivery', 'stripe', 'lead']

function deliveryPost(n: number) {
  const timestamp = Math.floor(Date.now() / 1000)
  const body = JSON.stringify(
    Array.from({ length: EVENTS_PER_BATCH }, (_, i) => ({
      email: `recipient-${n}-${i}@bench.example`,
      timestamp,
      event: 'delivered',
      sg_event_id: `ev-${n}-${i}-${randomBytes(4).toString('hex')}`,
      sg_message_id: `${randomBytes(11).toString('base64url')}.filter-1`,
    })),
  )
  const signature = sign('sha256', Buffer.from(String(timestamp) + body), SENDGRID_KEYS.privateKey)
  return {
    path: '/v1/e/mailprovider/webhook',
    headers: {
      'x-twilio-email-event-webhook-signature': signature.toString('base64'),
      'x-twilio-email-event-webhook-timestamp': String(timestamp),
    },
    body,
  }
}

function stripePost(n: number, runId: string, accountId: string) {
  const body = JSON.stringify({
    id: `evt_${runId}_${n}`,
    object: 'event',
    type: 'charge.succeeded',
    data: {
      object: {
        id: `ch_${runId}_${n}`,
        object: 'charge',
        amount: 4200,
        currency: 'usd',
        status: 'succeeded',
        billing_details: { name: `Customer ${n}`, email: `customer-${n}@bench.example`, phone: null },
        metadata: { account_id: accountId },
      },
    },
  })
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: STRIPE_SECRET })
  return { path: '/reviews/webhook/paymentprovider/charge', headers: { 'stripe-signature': signature }, body }
}

function leadPost(n: number, runId: string) {
  // No campaign claims the page: each lead is filed unclaimed, with no call to Graph.
  const event = leadEvent([{ leadgen_id: `9${runId}${n}`, page_id: `8${runId}`, form_id: `7${runId}` }])
  const { headers, payload } = signedLeadPost(event, LEADS_SECRET)
  return { path: '/webhooks/socialnet/leads', headers, body: payload }
}

interface Phase {
  name: 'fill' | 'without' | 'with'
  until: number
}

/** The phases: one period filling with retention, then `phase` seconds without and with it in turn. */
function phases(startedAt: number, periodS: number, phaseS: number, minutes: number): Phase[] {
  const end = startedAt + minutes * 60_000
  const list: Phase[] = [{ name: 'fill', until: startedAt + periodS * 1000 }]
  for (let at = startedAt + periodS * 1000, on = false; at < end; at += phaseS * 1000, on = !on)
    list.push({ name: on ? 'with' : 'without', until: Math.min(end, at + phaseS * 1000) })
  return list
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      period: { type: 'string', default: '60' },
      minutes: { type: 'string', default: '8' },
      rate: { type: 'string', default: '60' },
      phase: { type: 'string', default: '30' },
      every: { type: 'string', default: '5' },
    },
  })
  const periodS = Number(values.period)
  const rate = Number(values.rate)
  const everyMs = Number(values.every) * 1000
  const runId = randomBytes(4).toString('hex')
  const period = `${periodS}s`

  const start = await readStartCommand(REPO_ROOT)
  await prepareStart(REPO_ROOT, start)
  const server = await startServer({
    start,
    postgres: true,
    env: {
      MAIL_EVENT_BATCHES_RETENTION: period,
      REVIEW_WEBHOOK_EVENTS_RETENTION: period,
      LEAD_WEBHOOK_EVENTS_RETENTION: period,
      JOBS_COMPLETED_RETENTION: period,
      JOBS_ARCHIVE_RETENTION: period,
      JOBS_POLLING_INTERVAL_SECONDS: '0.5',
      SENDGRID_WEBHOOK_PUBLIC_KEY: SENDGRID_KEYS.publicKey
        .export({ type: 'spki', format: 'der' })
        .toString('base64'),
      STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
      SOCIALNET_APP_ID: '1234',
      SOCIALNET_APP_SECRET: LEADS_SECRET,
    },
  })
  const db = new pg.Pool({ connectionString: server.databaseUrl, max: 3 })
  // The run's database is dropped with the server (with force): a connection still open then just ends.
  db.on('error', () => undefined)
  const closeDb = registerStop(() => db.end())
  const boss = new PgBoss({
    connectionString: server.databaseUrl,
    schema: 'jobs',
    supervise: false,
    schedule: false,
    migrate: false,
    max: 1,
  })
  boss.on('error', () => undefined)
  await boss.start()
  const stopBoss = registerStop(() => boss.stop({ graceful: false }))
  // The bench decides when retention runs: the minute's cron would fall into the phases without it.
  await db.query('delete from jobs.schedule where name = $1', [RETENTION_JOB])
  const stripeAccount = (await createMember(server)).accountId

  const sendRequest = (kind: Kind, n: number) =>
    kind === 'delivery'
      ? deliveryPost(n)
      : kind === 'stripe'
        ? stripePost(n, runId, stripeAccount)
        : leadPost(n, runId)

  // Delete statements seen running, sampled: a request sent while one was is counted as meeting a run.
  let deleting = false
  let polling = true
  const pollActivity = (async () => {
    while (polling) {
      const { rows } = await db.query(
        `select count(*)::int as n from pg_stat_activity where state = 'active' and query like 'with deleted as (%'`,
      )
      deleting = rows[0].n > 0
      await delay(ACTIVITY_POLL_MS)
    }
  })()

  const histograms = {
    fill: newLatencyHistogram(),
    without: newLatencyHistogram(),
    with: newLatencyHistogram(),
    meetingDeletes: newLatencyHistogram(),
  }
  const counts = { fill: 0, without: 0, with: 0, meetingDeletes: 0, failed: 0 }
  const sentAt: Record<Kind, number[]> = { delivery: [], stripe: [], lead: [] }
  const samples: { at: number; phase: string; rows: number[]; bytes: number[] }[] = []

  async function sample(phase: string, startedAt: number) {
    const rows: number[] = []
    const bytes: number[] = []
    for (const { table } of TABLES) {
      // pg-boss's job table is partitioned by queue: its size is its partitions'.
      const { rows: result } = await db.query(
        `select (select count(*)::int from ${table}) as n,
          coalesce((select sum(pg_total_relation_size(relid)) from pg_partition_tree($1::regclass)
            where relid <> $1::regclass), pg_total_relation_size($1::regclass)) as size`,
        [table],
      )
      rows.push(result[0].n)
      bytes.push(Number(result[0].size))
    }
    samples.push({ at: Math.round((Date.now() - startedAt) / 1000), phase, rows, bytes })
  }

  async function runRetention(): Promise<void> {
    const id = await boss.send(RETENTION_JOB, {})
    if (!id) throw new Error('the retention job could not be queued')
    for (;;) {
      const [job] = await boss.findJobs(RETENTION_JOB, { id })
      if (job?.state === 'completed') return
      if (job?.state === 'failed') throw new Error(`retention job failed: ${JSON.stringify(job.output)}`)
      await delay(100)
    }
  }

  const before = sampleMachine([server.pid])
  const startedAt = Date.now()
  const plan = phases(startedAt, periodS, Number(values.phase), Number(values.minutes))
  let inFlight = 0
  let n = 0
  let nextRetention = 0
  let nextSample = startedAt
  const intervalMs = 1000 / rate
  for (const phase of plan) {
    console.log(`${Math.round((Date.now() - startedAt) / 1000)} s: ${phase.name}`)
    let retention: Promise<void> | undefined
    for (let next = Date.now(); Date.now() < phase.until; next += intervalMs) {
      const wait = next - Date.now()
      if (wait > 0) await delay(wait)
      if (Date.now() >= nextSample) {
        nextSample += SAMPLE_MS
        void sample(phase.name, startedAt)
      }
      if (phase.name !== 'without' && Date.now() >= nextRetention && !retention) {
        nextRetention = Date.now() + everyMs
        retention = runRetention().finally(() => {
          retention = undefined
        })
      }
      if (inFlight >= MAX_IN_FLIGHT) continue
      const kind = KINDS[n % KINDS.length] as Kind
      const request = sendRequest(kind, n++)
      const sentAtMs = Date.now()
      const meeting = deleting
      inFlight++
      fetch(new URL(request.path, server.baseUrl), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...VIA_TLS_PROXY, ...request.headers },
        body: request.body,
      })
        .then(async (response) => {
          await response.arrayBuffer()
          if (!response.ok) throw new Error(`${request.path} answered ${response.status}`)
          const ms = Date.now() - sentAtMs
          recordLatency(histograms[phase.name], ms)
          counts[phase.name]++
          if (meeting && phase.name === 'with') {
            recordLatency(histograms.meetingDeletes, ms)
            counts.meetingDeletes++
          }
          sentAt[kind].push(sentAtMs)
        })
        .catch((error: Error) => {
          counts.failed++
          if (counts.failed <= 5) console.log(`failed: ${error.message}`)
        })
        .finally(() => {
          inFlight--
        })
    }
    await retention
  }
  while (inFlight > 0) await delay(50)
  const after = sampleMachine([server.pid])
  polling = false
  await pollActivity

  // Everything posted is applied before the last run, so that "done with" holds for all of it.
  for (;;) {
    const { rows } = await db.query(`select
      (select count(*) from mail_event_batches where processed_at is null) +
      (select count(*) from review_webhook_events where status = 'received') +
      (select count(*) from lead_webhook_events where processed_at is null) as waiting`)
    if (Number(rows[0].waiting) === 0) break
    await delay(200)
  }
  const lastRunAt = Date.now()
  await runRetention()
  await sample('end', startedAt)

  console.log(
    `\n${n} posts at ${rate}/s (${KINDS.join(', ')} in turn; ${EVENTS_PER_BATCH} events a delivery batch), ` +
      `retention period ${periodS} s, a run every ${everyMs / 1000} s while on; ${counts.failed} failed`,
  )
  const line = (name: keyof typeof histograms) =>
    `${name.padEnd(15)} ${String(counts[name]).padStart(7)} posts  p50 ${latencyPercentile(histograms[name], 0.5).toFixed(1)} ms  p99 ${latencyPercentile(histograms[name], 0.99).toFixed(1)} ms`
  console.log(
    ['fill', 'without', 'with', 'meetingDeletes']
      .map((name) => line(name as keyof typeof histograms))
      .join('\n'),
  )
  const p99 = (name: keyof typeof histograms) => latencyPercentile(histograms[name], 0.99)
  console.log(
    `p99 with retention / without: ${(p99('with') / p99('without')).toFixed(2)}; ` +
      `while a delete ran / without: ${(p99('meetingDeletes') / p99('without')).toFixed(2)} (target: at most 1.2)`,
  )

  console.log(`\nrows and total size (kB) every ${SAMPLE_MS / 1000} s:`)
  console.log(['  s', 'phase'.padEnd(8), ...TABLES.map(({ table }) => table.padStart(24))].join(' '))
  for (const s of samples)
    console.log(
      [
        String(s.at).padStart(3),
        s.phase.padEnd(8),
        ...s.rows.map((rows, i) => `${rows} / ${Math.round((s.bytes[i] as number) / 1024)}`.padStart(24)),
      ].join(' '),
    )

  // Flat: the last sample of each phase with retention, table by table.
  const phaseEnds = samples.filter((s, i) => s.phase === 'with' && samples[i + 1]?.phase !== 'with')
  console.log('\nat the end of each phase with retention (rows / kB):')
  for (const [i, { table }] of TABLES.entries())
    console.log(
      `${table.padEnd(22)} ${phaseEnds.map((s) => `${s.rows[i]} / ${Math.round((s.bytes[i] as number) / 1024)}`).join(', ')}`,
    )

  // After the last run: nothing younger than the period gone, nothing done with older than it left.
  const cutoff = new Date(lastRunAt - periodS * 1000)
  const posted = (kind: Kind) => sentAt[kind].filter((at) => at > cutoff.getTime() + 1000).length
  const younger = async (table: string, time: string) =>
    Number(
      (
        await db.query(`select count(*) as n from ${table} where ${time} > $1`, [
          new Date(cutoff.getTime() + 1000),
        ])
      ).rows[0].n,
    )
  // A run deletes by the id's second too: a row of the cutoff's own second may stay until the next.
  const older = async (table: string, time: string) =>
    Number(
      (
        await db.query(`select count(*) as n from ${table} where ${time} < $1`, [
          new Date(cutoff.getTime() - 1000),
        ])
      ).rows[0].n,
    )
  const checks = [
    ['mail_event_batches', 'received_at', 'delivery'],
    ['review_webhook_events', 'created_at', 'stripe'],
    ['lead_webhook_events', 'created_at', 'lead'],
  ] as const
  console.log('\nafter a last run:')
  let lost = false
  for (const [table, time, kind] of checks) {
    const kept = await younger(table, time)
    const left = await older(table, time)
    if (kept < posted(kind)) lost = true
    console.log(
      `${table}: ${kept} rows younger than the period for ${posted(kind)} posts sent in it; ${left} older left`,
    )
  }
  console.log(loadLine(before, after))
  await stopBoss()
  await closeDb()
  await server.stop()
  if (lost || counts.failed > 0) process.exitCode = 1
}

main()
  .catch((error: Error) => {
    console.error(`error: ${error.message}`)
    process.exitCode = 1
  })
  .finally(() => stopEverything())
