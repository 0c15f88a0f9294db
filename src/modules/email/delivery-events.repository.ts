import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { rowsOf } from '../../platform/db/rows.js'
import { SG_EVENT_ID_MAX_LENGTH } from './delivery-events.schemas.js'
import { communicationEvents, communications, doNotDisturbEntries, mailEventBatches } from './tables.js'

export async function insertEventBatch(db: Database, payload: unknown[]): Promise<string> {
  const [row] = await db.insert(mailEventBatches).values({ payload }).returning({ id: mailEventBatches.id })
  if (!row) throw new Error('event batch insert returned no row')
  return row.id
}

/** Whether the batch exists and was processed, without reading its payload. */
export async function findEventBatchState(
  db: Database,
  batchId: string,
): Promise<{ processedAt: Date | null } | undefined> {
  const [row] = await db
    .select({ processedAt: mailEventBatches.processedAt })
    .from(mailEventBatches)
    .where(eq(mailEventBatches.id, batchId))
  return row
}

/** Sets `processed_at` once; false when the batch was already processed (a concurrent run won). */
export async function markEventBatchProcessed(db: Database, batchId: string): Promise<boolean> {
  const rows = await db
    .update(mailEventBatches)
    .set({ processedAt: new Date() })
    .where(and(eq(mailEventBatches.id, batchId), isNull(mailEventBatches.processedAt)))
    .returning({ id: mailEventBatches.id })
  return rows.length === 1
}

/** A newly stored event whose effects reach beyond its own row (do-not-disturb, support acks). */
export interface StoredEventEffect {
  accountId: string
  communicationId: string | null
  event: string
  email: string
  /** SendGrid's `type` on a bounce: `bounce` (hard) or `blocked` (soft). */
  bounceType: string | null
}

export interface AppliedBatch {
  /** Elements of the payload that are not usable events (no id, name or timestamp). */
  invalid: number
  /** Usable events whose message is unknown and whose custom args name no account. */
  unmatched: number
  /** Some of their `sg_event_id`s, for the log. */
  unmatchedSample: string[]
  effects: StoredEventEffect[]
}

/** A scalar field of an event as text: strings, numbers and booleans; '' and anything else is null. */
const field = (name: string) =>
  sql`case when jsonb_typeof(item -> ${name}) in ('string', 'number', 'boolean')
    then nullif(item ->> ${name}, '') end`

/**
 * Stores the events of a stored batch in one statement, reading the payload where it lies: no event
 * travels to the service and back. An event is usable with an `sg_event_id` (of SG_EVENT_ID_MAX_LENGTH at
 * most), an `event` and a `timestamp` (Unix seconds, a number or a numeric string). It belongs to the
 * record of `moduleTag` whose `msg_id` is the text of its `sg_message_id` before the first dot (the oldest,
 * should two share one), and else to the account its `account_id` custom argument names. Deliberately not account-scoped: SendGrid posts without
 * our credentials, and the message id is what tells whose record an event is; everything written is
 * then scoped to that account. An event already stored for the account (same `sg_event_id`) is skipped,
 * so only events inserted now come back with effects, whatever runs concurrently; rows go in key order
 * so that concurrent batches lock keys in the same order and wait for each other instead of deadlocking.
 */
export async function storeBatchEvents(
  db: Database,
  batchId: string,
  moduleTag: string,
): Promise<AppliedBatch> {
  const result = await db.execute(sql`
    with items as (
      select item, ordinality
      from ${mailEventBatches} as b, jsonb_array_elements(b.payload) with ordinality as e(item, ordinality)
      where b.id = ${batchId} and jsonb_typeof(b.payload) = 'array'
    ),
    parsed as (
      select ordinality,
        ${field('sg_event_id')} as sg_event_id,
        ${field('event')} as event,
        coalesce(${field('email')}, '') as email,
        case when jsonb_typeof(item -> 'timestamp') in ('number', 'string')
          and item ->> 'timestamp' ~ '^[0-9]{1,15}$' then (item ->> 'timestamp')::bigint end as timestamp,
        ${field('sg_message_id')} as sg_message_id,
        ${field('account_id')} as account_arg,
        ${field('uid')} as uid,
        ${field('useragent')} as useragent,
        ${field('ip')} as ip,
        ${field('url')} as url,
        ${field('type')} as bounce_type
      from items
      where jsonb_typeof(item) = 'object'
    ),
    usable as (
      select * from parsed
      where sg_event_id is not null and length(sg_event_id) <= ${SG_EVENT_ID_MAX_LENGTH}
        and event is not null and timestamp is not null
    ),
    matched as (
      select u.*, record.id as communication_id,
        coalesce(record.account_id, case when u.account_arg ~ '^[0-9a-f]{24}$' then u.account_arg end)
          as account_id
      from usable as u
      left join lateral (
        select c.id, c.account_id from ${communications} as c
        where c.module = ${moduleTag}
          and c.msg_id = nullif(split_part(u.sg_message_id, '.', 1), '')
        order by c.id
        limit 1
      ) as record on true
    ),
    candidates as (
      select distinct on (account_id, sg_event_id) *
      from matched
      where account_id is not null
      order by account_id, sg_event_id, ordinality
    ),
    stored as (
      insert into ${communicationEvents}
        (account_id, communication_id, sg_event_id, event, email, timestamp, sg_message_id, uid, useragent, ip,
          url, bounce_type)
      select account_id, communication_id, sg_event_id, event, email, timestamp, sg_message_id, uid,
        useragent, ip, url, bounce_type
      from candidates
      order by account_id, sg_event_id
      on conflict (account_id, sg_event_id) do nothing
      returning account_id, communication_id, event, email, bounce_type
    )
    select
      (select count(*) from items) - (select count(*) from usable) as invalid,
      (select count(*) from matched where account_id is null) as unmatched,
      (select coalesce(jsonb_agg(sg_event_id), '[]'::jsonb)
        from (select sg_event_id from matched where account_id is null limit 20) as sample) as unmatched_sample,
      (select coalesce(jsonb_agg(jsonb_build_object(
          'accountId', account_id, 'communicationId', communication_id, 'event', event,
          'email', email, 'bounceType', bounce_type)), '[]'::jsonb)
        from stored
        where event in ('open', 'unsubscribe', 'spamreport', 'bounce')) as effects`)
  const [row] = rowsOf<Record<string, unknown>>(result)
  return {
    invalid: Number(row?.invalid ?? 0),
    unmatched: Number(row?.unmatched ?? 0),
    unmatchedSample: (row?.unmatched_sample ?? []) as string[],
    effects: (row?.effects ?? []) as StoredEventEffect[],
  }
}

/**
 * Lists the addresses in one statement; an address already on its account's list keeps the entry it has
 * (the unique key is the account and the lower-cased address), as `addToDoNotDisturb` does one by one.
 */
export async function insertPermanentDoNotDisturbEntries(
  db: Database,
  entries: { accountId: string; value: string; reason: string }[],
): Promise<void> {
  if (entries.length === 0) return
  await db
    .insert(doNotDisturbEntries)
    .values(entries.map((entry) => ({ ...entry, type: 'permanent' as const })))
    .onConflictDoNothing()
}
