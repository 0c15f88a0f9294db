import type pg from 'pg'
import { percentile } from './each.js'

/**
 * What the neighbours scenario reads from the run's database: when each of B's jobs became due and when it
 * started (pg-boss's own rows), whether A's work has drained, and A's results, counted once at the end.
 */

/** One of B's jobs: its queue, when it became due and when it (last) started, epoch ms. */
export interface JobTimes {
  name: string
  dueAt: number
  startedAt: number | null
}

/**
 * pg-boss's job tables in the database, whatever its schema: `pgboss` (pg-boss 10, with `archive`), or the schema
 * pg-boss 12 is installed in beside it (JOBS_SCHEMA, `jobs`): every table named `job` or `archive` with a
 * `started_on`, and whether it has pg-boss 12's `group_id`.
 */
async function jobTables(db: pg.Pool): Promise<{ table: string; hasGroup: boolean }[]> {
  const { rows } = await db.query<{ table_schema: string; table_name: string; columns: string[] }>(
    `select table_schema, table_name, array_agg(column_name::text) as columns from information_schema.columns
      where table_name in ('job', 'archive') and table_schema not in ('public', 'information_schema', 'pg_catalog')
      group by table_schema, table_name`,
  )
  return rows
    .filter((row) => row.columns.includes('started_on') && row.columns.includes('start_after'))
    .map((row) => ({
      table: `"${row.table_schema}"."${row.table_name}"`,
      hasGroup: row.columns.includes('group_id'),
    }))
}

/**
 * B's jobs, found by their data: the review webhook events of B's charges, B's review requests' sends, the
 * delivery event batches of B's events; and, where pg-boss 12's groups carry accounts, every job of B's group
 * (pg-boss 12 names B's webhook events' group by the account too).
 * Due is `start_after`, or the job's creation when that is later (a request due before its job was queued).
 */
export async function jobTimesOf(db: pg.Pool, accountId: string, chargePrefix: string): Promise<JobTimes[]> {
  // A job pg-boss 12 adopted from pg-boss 10's schema is in both, with one id: its latest start counts.
  const byId = new Map<string, JobTimes>()
  for (const { table, hasGroup } of await jobTables(db)) {
    const { rows } = await db.query<{ id: string; name: string; due: Date; started: Date | null }>(
      `select j.id, j.name, greatest(j.start_after, j.created_on) as due, j.started_on as started
         from ${table} j
        where (j.name = 'reviews.webhook-event' and exists (
                 select 1 from review_webhook_events e where e.id = j.data->>'event_id' and e.event_id like $2))
           or (j.name in ('reviews.send-request', 'reviews.follow-up') and j.data->>'account_id' = $1)
           or (j.name = 'email.delivery-events' and exists (
                 select 1 from mail_event_batches b where b.id = j.data->>'batch_id' and b.payload->0->>'account_id' = $1))
           ${hasGroup ? 'or j.group_id = $1' : ''}`,
      [accountId, `${chargePrefix.replace(/_/g, '\\_')}%`],
    )
    for (const row of rows) {
      const job = { name: row.name, dueAt: row.due.getTime(), startedAt: row.started?.getTime() ?? null }
      const known = byId.get(row.id)
      if (!known || (job.startedAt ?? 0) > (known.startedAt ?? 0)) byId.set(row.id, job)
    }
  }
  return [...byId.values()]
}

export interface WaitFigures {
  jobs: number
  notStarted: number
  p50Ms: number
  p99Ms: number
  maxMs: number
  byQueue: Record<string, { jobs: number; p99Ms: number; maxMs: number }>
}

/** The wait from due to start of the jobs due in [from, to); a job not started yet waits until `now`. */
export function waitsOf(jobs: JobTimes[], from: number, to: number, now: number): WaitFigures {
  const of = jobs.filter((job) => job.dueAt >= from && job.dueAt < to)
  const wait = (job: JobTimes) => Math.max(0, (job.startedAt ?? now) - job.dueAt)
  const sorted = of.map(wait).sort((a, b) => a - b)
  const byQueue: WaitFigures['byQueue'] = {}
  for (const name of [...new Set(of.map((job) => job.name))].sort()) {
    const waits = of
      .filter((job) => job.name === name)
      .map(wait)
      .sort((a, b) => a - b)
    byQueue[name] = { jobs: waits.length, p99Ms: percentile(waits, 0.99), maxMs: waits.at(-1) ?? 0 }
  }
  return {
    jobs: of.length,
    notStarted: of.filter((job) => job.startedAt === null).length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? 0,
    byQueue,
  }
}

/** A's work still to do: events not applied, requests not sent, batches not processed, leads not captured. */
export interface Backlog {
  events: number
  requests: number
  batches: number
  leads: number
}

export async function backlogOf(
  db: pg.Pool,
  accountId: string,
  chargePrefix: string,
  leads: number,
): Promise<Backlog> {
  const { rows } = await db.query<Record<keyof Backlog, string>>(
    `select
       (select count(*) from review_webhook_events where status = 'received' and source = 'paymentprovider' and event_id like $2) as events,
       (select count(*) from review_requests where account_id = $1 and status = 'scheduled') as requests,
       (select count(*) from mail_event_batches where processed_at is null and payload->0->>'account_id' = $1) as batches,
       $3::int - (select count(*) from leads where account_id = $1 and status = 'captured') as leads`,
    [accountId, `${chargePrefix.replace(/_/g, '\\_')}%`, leads],
  )
  const row = rows[0]
  return {
    events: Number(row?.events),
    requests: Number(row?.requests),
    batches: Number(row?.batches),
    leads: Number(row?.leads),
  }
}

export const drained = (backlog: Backlog) =>
  backlog.events === 0 && backlog.requests === 0 && backlog.batches === 0 && backlog.leads <= 0

/** The account's results, counted once at the end. */
export interface Results {
  chargeEvents: number
  chargesProcessed: number
  requests: number
  /** Charges that scheduled other than exactly one review request. */
  notOneRequest: number
  requestsSent: number
  /** Distinct delivery events stored for the account, of those posted with `eventPrefix`. */
  deliveryEvents: number
  leadsStored: number
  leadsDistinct: number
  leadsCaptured: number
  leadContacts: number
  roomMessages: number
  /** Distinct contents among them: each message the bench sent has its own. */
  roomMessagesDistinct: number
}

export async function resultsOf(
  db: pg.Pool,
  accountId: string,
  chargePrefix: string,
  eventPrefix: string,
  roomIds: string[],
): Promise<Results> {
  const like = (prefix: string) => `${prefix.replace(/_/g, '\\_')}%`
  const { rows } = await db.query<Record<keyof Results, string>>(
    `select
       (select count(*) from review_webhook_events where source = 'paymentprovider' and event_id like $2) as "chargeEvents",
       (select count(*) from review_webhook_events where source = 'paymentprovider' and event_id like $2 and status = 'processed') as "chargesProcessed",
       (select count(*) from review_requests where account_id = $1) as requests,
       (select count(*) from review_webhook_events e
          where e.source = 'paymentprovider' and e.event_id like $2
            and (select count(*) from review_requests r where r.event_id = e.id) <> 1) as "notOneRequest",
       (select count(*) from review_requests where account_id = $1 and status = 'sent') as "requestsSent",
       (select count(distinct sg_event_id) from communication_events where account_id = $1 and sg_event_id like $3) as "deliveryEvents",
       (select count(*) from leads where account_id = $1) as "leadsStored",
       (select count(distinct leadgen_id) from leads where account_id = $1) as "leadsDistinct",
       (select count(*) from leads where account_id = $1 and status = 'captured') as "leadsCaptured",
       (select count(distinct contact_id) from leads where account_id = $1 and status = 'captured') as "leadContacts",
       (select count(*) from room_messages where room_id = any($4)) as "roomMessages",
       (select count(distinct content) from room_messages where room_id = any($4)) as "roomMessagesDistinct"`,
    [accountId, like(chargePrefix), like(eventPrefix), roomIds],
  )
  const row = rows[0] as Record<keyof Results, string>
  return Object.fromEntries(
    Object.entries(row).map(([key, value]) => [key, Number(value)]),
  ) as unknown as Results
}
