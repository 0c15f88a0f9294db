import { and, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import {
  communicationEvents,
  communications,
  doNotDisturbEntries,
  MODULE_TAGS,
  mailEventBatches,
} from './tables.js'

/** An event to store: the spec's fields, the account it belongs to and its record when known. */
export type CommunicationEventRow = Required<
  Omit<typeof communicationEvents.$inferInsert, 'id' | 'createdAt'>
>
export type EventBatchRow = typeof mailEventBatches.$inferSelect

export async function insertEventBatch(db: Database, payload: unknown[]): Promise<string> {
  const [row] = await db.insert(mailEventBatches).values({ payload }).returning({ id: mailEventBatches.id })
  if (!row) throw new Error('event batch insert returned no row')
  return row.id
}

export async function findEventBatch(db: Database, batchId: string): Promise<EventBatchRow | undefined> {
  const [row] = await db.select().from(mailEventBatches).where(eq(mailEventBatches.id, batchId))
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

/**
 * The SendGrid records with any of the message ids, in every account. Deliberately not account-scoped:
 * SendGrid posts events without our credentials or account, so the message id (unique per provider
 * request) is what tells whose record an event belongs to; the account is read from the record found.
 */
export async function findSendGridCommunicationsByMessageIds(
  db: Database,
  messageIds: string[],
): Promise<{ id: string; accountId: string; msgId: string }[]> {
  if (messageIds.length === 0) return []
  const rows = await db
    .select({ id: communications.id, accountId: communications.accountId, msgId: communications.msgId })
    .from(communications)
    .where(and(eq(communications.module, MODULE_TAGS.sendgrid), inArray(communications.msgId, messageIds)))
    .orderBy(communications.id)
  return rows.flatMap((row) => (row.msgId === null ? [] : [{ ...row, msgId: row.msgId }]))
}

/**
 * Inserts the events, skipping any whose (account_id, sg_event_id) is stored already, and returns only
 * the rows inserted now. One statement with one parameter whatever the batch size; rows go in key order
 * so that concurrent batches lock keys in the same order and wait for each other instead of deadlocking.
 */
export async function insertNewCommunicationEvents(
  db: Database,
  rows: CommunicationEventRow[],
): Promise<{ accountId: string; sgEventId: string }[]> {
  if (rows.length === 0) return []
  const result = await db.execute(sql`
    insert into ${communicationEvents}
      (id, account_id, communication_id, sg_event_id, event, email, timestamp, sg_message_id, uid, useragent, ip, url)
    select e.id, e."accountId", e."communicationId", e."sgEventId", e.event, e.email, e.timestamp,
      e."sgMessageId", e.uid, e.useragent, e.ip, e.url
    from jsonb_to_recordset(${JSON.stringify(rows.map((row) => ({ ...row, id: newId() })))}::jsonb) as e(
      id text, "accountId" text, "communicationId" text, "sgEventId" text, event text, email text,
      timestamp bigint, "sgMessageId" text, uid text, useragent text, ip text, url text
    )
    order by e."accountId", e."sgEventId"
    on conflict (account_id, sg_event_id) do nothing
    returning account_id as "accountId", sg_event_id as "sgEventId"`)
  return (result as unknown as { rows: { accountId: string; sgEventId: string }[] }).rows
}

/**
 * Moves each record's delivery status to the given one only when it is newer: a later timestamp, or the
 * same timestamp and a later place in `order`. The condition sits in the UPDATE itself, so it is
 * re-checked on the locked row and a concurrent batch can never move a record back.
 */
export async function advanceDeliveryStatuses(
  db: Database,
  updates: { communicationId: string; accountId: string; status: string; at: number }[],
  order: readonly string[],
): Promise<void> {
  if (updates.length === 0) return
  const ranking = sql`array[${sql.join(
    order.map((status) => sql`${status}`),
    sql`, `,
  )}]::text[]`
  await db.execute(sql`
    update ${communications} as c
    set delivery_status = u.status, delivery_status_at = u.at, modified_at = now()
    from jsonb_to_recordset(${JSON.stringify(updates)}::jsonb)
      as u("communicationId" text, "accountId" text, status text, at bigint)
    where c.id = u."communicationId"
      and c.account_id = u."accountId"
      and (
        c.delivery_status_at is null
        or u.at > c.delivery_status_at
        or (
          u.at = c.delivery_status_at
          and coalesce(array_position(${ranking}, u.status), 0)
            > coalesce(array_position(${ranking}, c.delivery_status), 0)
        )
      )`)
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
