import { generateKeyPairSync, randomBytes, sign } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { createMember } from '../admin.js'
import { loadAverage } from '../machine.js'
import {
  type Measured,
  type MeasuredScenario,
  type MeasureOptions,
  type Target,
  VIA_TLS_PROXY,
} from '../scenario.js'
import { ingestAgainstSql } from './delivery-events-sql.js'

const EVENTS_PER_BATCH = 1_000
const DEFAULT_BATCHES = 200
const ACCOUNTS = 4
// Ten batches' worth of messages: each batch reaches 1,000 records, as a real batch reaches mostly distinct
// messages, and each record gets ten events over the run (batches b and b + 10 share their records).
const RECORDS = 10_000
// A quarter each, so that statuses advance and unsubscribes list addresses as in real traffic.
const EVENT_TYPES = ['delivered', 'open', 'click', 'unsubscribe'] as const
// Every DUPLICATE_EVERY-th batch is posted again DUPLICATE_LAG batches later, while its first copy may
// still be processing: SendGrid redelivers whole batches, and each event must still be stored once.
const DUPLICATE_EVERY = 20
const DUPLICATE_LAG = 5
const TARGET_EVENTS_PER_SECOND = 20_000
const POLL_MS = 100
// Processing that stores nothing new for this long has stopped: the run fails instead of waiting on.
const STALL_MS = 60_000
const POST_TIMEOUT_MS = 60_000

export const WEBHOOK_PATH = '/v1/e/mailprovider/webhook'

// Production takes signed events only (SENDGRID_WEBHOOK_PUBLIC_KEY): the run's posts are signed as SendGrid
// signs them, with a key pair of the run's own.
const EVENT_WEBHOOK_KEYS = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })

/** Events thread to records of the configured provider: SendGrid's; the key checks the run's signatures. */
export const serverEnv = {
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: 'SG.bench-never-called',
  SENDGRID_WEBHOOK_PUBLIC_KEY: EVENT_WEBHOOK_KEYS.publicKey
    .export({ format: 'der', type: 'spki' })
    .toString('base64'),
}

/** SendGrid's signature headers: ECDSA over the timestamp (Unix seconds) followed by the body. */
export function signedHeaders(body: string): Record<string, string> {
  const timestamp = String(Math.floor(Date.now() / 1000))
  return {
    'x-twilio-email-event-webhook-signature': sign(
      'sha256',
      Buffer.from(timestamp + body),
      EVENT_WEBHOOK_KEYS.privateKey,
    ).toString('base64'),
    'x-twilio-email-event-webhook-timestamp': timestamp,
  }
}

export interface SentRecord {
  id: string
  accountId: string
  msgId: string
  email: string
}

/** SendGrid records (`module 'SENDGRID'`, known `msg_id`) for the events to match, written directly. */
async function insertRecords(db: pg.Pool, accountIds: string[]): Promise<SentRecord[]> {
  const records = Array.from({ length: RECORDS }, (_, i) => ({
    id: randomBytes(12).toString('hex'),
    accountId: accountIds[i % accountIds.length] ?? '',
    msgId: randomBytes(11).toString('base64url'),
    email: `recipient-${i}@bench.example`,
  }))
  await db.query(
    `insert into communications (id, account_id, type, module, msg_id, success, to_addresses, subject)
     select id, account_id, 'OUTGOING', 'SENDGRID', msg_id, true, array[email], 'bench'
     from unnest($1::text[], $2::text[], $3::text[], $4::text[]) as r(id, account_id, msg_id, email)`,
    [
      records.map((r) => r.id),
      records.map((r) => r.accountId),
      records.map((r) => r.msgId),
      records.map((r) => r.email),
    ],
  )
  return records
}

/**
 * Batch `b` of `size` events as SendGrid posts it: unique `sg_event_id`s, our custom args, the message id
 * with a suffix.
 */
export function batchBody(
  runId: string,
  b: number,
  records: SentRecord[],
  uid: string,
  size = EVENTS_PER_BATCH,
): string {
  const baseTimestamp = Math.floor(Date.now() / 1000)
  const events = Array.from({ length: size }, (_, i) => {
    const k = b * size + i
    const record = records[k % records.length] as SentRecord
    const event = EVENT_TYPES[k % EVENT_TYPES.length] as string
    return {
      email: record.email,
      timestamp: baseTimestamp + b,
      event,
      sg_event_id: `${runId}-${k}`,
      sg_message_id: `${record.msgId}.recvd-bench-${k}`,
      'smtp-id': `<${record.msgId}@bench.example>`,
      account_id: record.accountId,
      uid,
      ...(event === 'open' || event === 'click' ? { useragent: 'Mozilla/5.0 (bench)', ip: '192.0.2.1' } : {}),
      ...(event === 'click' ? { url: `https://bench.example/link/${k % 17}` } : {}),
    }
  })
  return JSON.stringify(events)
}

/** The order of posting: each batch once, every DUPLICATE_EVERY-th again DUPLICATE_LAG batches later. */
function postingOrder(batches: number): number[] {
  const order: number[] = []
  for (let b = 0; b < batches; b++) {
    order.push(b)
    const earlier = b - DUPLICATE_LAG
    if (earlier >= 0 && earlier % DUPLICATE_EVERY === 0) order.push(earlier)
  }
  return order
}

interface Posted {
  seconds: number
  statuses: Map<number, number>
  errors: number
  latenciesMs: number[]
}

/** Posts the bodies in order on `connections` concurrent keep-alive connections (fetch's pool). */
async function postAll(baseUrl: string, bodies: string[], order: number[], connections: number) {
  const url = new URL(WEBHOOK_PATH, baseUrl)
  const result: Posted = { seconds: 0, statuses: new Map(), errors: 0, latenciesMs: [] }
  let next = 0
  const started = performance.now()
  const poster = async () => {
    for (let i = next++; i < order.length; i = next++) {
      const body = bodies[order[i] as number] as string
      const sentAt = performance.now()
      try {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...VIA_TLS_PROXY, ...signedHeaders(body) },
          body,
          signal: AbortSignal.timeout(POST_TIMEOUT_MS),
        })
        await response.arrayBuffer()
        result.statuses.set(response.status, (result.statuses.get(response.status) ?? 0) + 1)
      } catch {
        result.errors++
      }
      result.latenciesMs.push(performance.now() - sentAt)
    }
  }
  await Promise.all(Array.from({ length: Math.min(connections, order.length) }, poster))
  result.seconds = (performance.now() - started) / 1000
  return result
}

interface Stored {
  events: number
  unprocessedBatches: number
  batches: number
}

async function stored(db: pg.Pool): Promise<Stored> {
  const { rows } = await db.query<{ events: string; unprocessed: string; batches: string }>(
    `select (select count(*) from communication_events) as events,
       (select count(*) from mail_event_batches where processed_at is null) as unprocessed,
       (select count(*) from mail_event_batches) as batches`,
  )
  const row = rows[0]
  return {
    events: Number(row?.events),
    unprocessedBatches: Number(row?.unprocessed),
    batches: Number(row?.batches),
  }
}

/** Polls until every stored batch is processed; undefined when nothing new was stored for STALL_MS. */
async function waitUntilProcessed(db: pg.Pool): Promise<Stored | undefined> {
  let last = await stored(db)
  let progressAt = Date.now()
  while (last.unprocessedBatches > 0) {
    if (Date.now() - progressAt > STALL_MS) return undefined
    await delay(POLL_MS)
    const now = await stored(db)
    if (now.events !== last.events || now.unprocessedBatches !== last.unprocessedBatches)
      progressAt = Date.now()
    last = now
  }
  return last
}

const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? 0

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('delivery-events needs the server on PostgreSQL (--postgres)')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const members = await Promise.all(Array.from({ length: ACCOUNTS }, () => createMember(target)))
    const records = await insertRecords(
      db,
      members.map((m) => m.accountId),
    )
    const batches = options.requests ?? DEFAULT_BATCHES
    const runId = randomBytes(6).toString('hex')
    const uid = members[0]?.userId ?? ''
    // Built before the clock starts, so that the figures hold the server's work only.
    const bodies = Array.from({ length: batches }, (_, b) => batchBody(runId, b, records, uid))
    const order = postingOrder(batches)
    const distinct = batches * EVENTS_PER_BATCH
    const loadBefore = loadAverage()

    const startedAt = performance.now()
    const posted = await postAll(target.baseUrl, bodies, order, options.connections)
    const done = await waitUntilProcessed(db)
    const totalSeconds = (performance.now() - startedAt) / 1000
    const loadAfter = loadAverage()
    const { rows: matchedRows } = await db.query<{ n: string }>(
      `select count(distinct communication_id) as n from communication_events where communication_id is not null`,
    )

    // Only once the end-to-end figures are taken: the second phase's processing would slow the first.
    const url = new URL(WEBHOOK_PATH, target.baseUrl).toString()
    const again =
      done && !posted.errors
        ? await ingestAgainstSql(
            target,
            url,
            bodies,
            options.connections,
            () => waitUntilProcessed(db),
            signedHeaders,
          )
        : undefined
    const final = again ? await waitUntilProcessed(db) : done

    const ok = posted.statuses.get(200) ?? 0
    const notOk = order.length - ok - posted.errors
    const sorted = [...posted.latenciesMs].sort((a, b) => a - b)
    const eventsPerSecond = distinct / totalSeconds
    const storedOnce = final?.events === distinct
    const batchesPosted = order.length + (again?.batchesAdded ?? 0)
    const allBatchesKept = final?.batches === batchesPosted
    const failed =
      posted.errors > 0 || notOk > 0 || !done || !final || !storedOnce || !allBatchesKept || !!again?.failed
    const statuses = [...posted.statuses].map(([status, n]) => `${n} × ${status}`).join(', ')
    return {
      passed: !failed && eventsPerSecond >= TARGET_EVENTS_PER_SECOND,
      failed,
      lines: [
        `${batches} batches of ${EVENTS_PER_BATCH} events to ${RECORDS} records in ${ACCOUNTS} accounts, ` +
          `${order.length - batches} of them posted twice; ${options.connections} concurrent posts`,
        '',
        `ingest (answered 200: stored and queued)   ${posted.seconds.toFixed(2)} s   ` +
          `${(distinct / posted.seconds).toFixed(0)} events/s   ` +
          `post p50 ${percentile(sorted, 0.5).toFixed(0)} ms, p99 ${percentile(sorted, 0.99).toFixed(0)} ms`,
        done
          ? `ingest and processing                     ${totalSeconds.toFixed(2)} s   ` +
            `${eventsPerSecond.toFixed(0)} events/s   target >= ${TARGET_EVENTS_PER_SECOND}`
          : `processing stalled: nothing stored for ${STALL_MS / 1000} s`,
        '',
        `answers: ${statuses || 'none'}; connection errors ${posted.errors}`,
        `stored events ${final?.events ?? '?'} of ${distinct} distinct: ${storedOnce ? 'each once' : 'MISMATCH'}; ` +
          `raw batches kept ${final?.batches ?? '?'} of ${batchesPosted} posted` +
          `${again ? ' (and replayed)' : ''}; ` +
          `records with events ${matchedRows[0]?.n ?? '?'} of ${RECORDS}`,
        `load average (1, 5, 15 min) before ${loadBefore}, after ${loadAfter}`,
        '',
        ...(again?.lines ?? []),
      ],
    }
  } finally {
    await db.end()
  }
}

/** SendGrid's event webhook at full batches: storing, queueing and applying them, end to end. */
export const deliveryEvents: MeasuredScenario = {
  description:
    `POST ${WEBHOOK_PATH} with batches of ${EVENTS_PER_BATCH} events, until every event is stored ` +
    '(communication_events), once',
  requiresPostgres: true,
  replaysSql: true,
  serverEnv,
  measure,
}
