import { and, count, eq, getTableColumns, gte, lt, lte, ne, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import {
  type KeysetList,
  keysetList,
  type ListWindow,
  placeField,
  selectListPage,
} from '../../platform/db/page.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import type { TriggerType } from './documents.schemas.js'
import { reviewWebhookEvents } from './tables.js'

export type WebhookEventRow = typeof reviewWebhookEvents.$inferSelect
type Outcome = Pick<WebhookEventRow, 'status' | 'reason' | 'reasonText' | 'accountId' | 'customerKey'> &
  Partial<Pick<WebhookEventRow, 'payload'>>

const eventInsert = preparedStatement<{ id: string }>(
  'review_webhook_event_insert',
  sql`insert into ${reviewWebhookEvents} (id, source, event_id, type, trigger, account_id, payload)
    values (${sql.placeholder('id')}, ${sql.placeholder('source')}, ${sql.placeholder('eventId')},
      ${sql.placeholder('type')}, ${sql.placeholder('trigger')}, ${sql.placeholder('accountId')},
      ${sql.placeholder('payload')}::jsonb)
    on conflict do nothing
    returning id`,
)

/**
 * The stored event's id, or null when the source sent this event before. Every webhook post runs it: one
 * prepared statement. The events are the reviews' intake: `account_id` is what the event names when it
 * arrives, if anything (a payment without metadata, an order of an unclaimed location name none).
 */
export async function insertWebhookEvent(
  db: Database,
  values: Pick<WebhookEventRow, 'source' | 'eventId' | 'type' | 'trigger' | 'accountId' | 'payload'>,
): Promise<string | null> {
  const [row] = await eventInsert(db, {
    ...values,
    id: newId(),
    payload: JSON.stringify(values.payload),
  })
  return row?.id ?? null
}

/** The event the account reported (`POST /reviews/events`) under `eventId`, as stored. */
export async function findReportedEvent(
  db: Database,
  accountId: string,
  eventId: string,
): Promise<WebhookEventRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewWebhookEvents)
    .where(
      and(
        eq(reviewWebhookEvents.accountId, accountId),
        eq(reviewWebhookEvents.source, 'account'),
        eq(reviewWebhookEvents.eventId, eventId),
      ),
    )
  return row
}

/**
 * Events still waiting to be applied that were received before `before`, oldest first: the requeue sweep,
 * across accounts (and events that name none yet).
 */
export async function findReceivedBefore(db: Database, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: reviewWebhookEvents.id })
    .from(reviewWebhookEvents)
    .where(and(eq(reviewWebhookEvents.status, 'received'), lt(reviewWebhookEvents.createdAt, before)))
    .orderBy(reviewWebhookEvents.createdAt)
    .limit(limit)
  return rows.map((row) => row.id)
}

/**
 * The event, locked until the transaction ends, so two runs of its job cannot both apply it. By its own id
 * alone: its job is queued when it arrives, before any account is known for some.
 */
export async function lockWebhookEvent(db: Database, id: string): Promise<WebhookEventRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewWebhookEvents)
    .where(eq(reviewWebhookEvents.id, id))
    .for('update')
  return row
}

/** What applying the event made of it, by its own id (as its job knows it), with the account it was for. */
export async function recordOutcome(db: Database, id: string, outcome: Outcome): Promise<void> {
  await db
    .update(reviewWebhookEvents)
    .set({ ...outcome, processedAt: new Date() })
    .where(eq(reviewWebhookEvents.id, id))
}

/** Orders of a customer an account received before `event`, since `since`: its order history. */
export async function countEarlierOrders(
  db: Database,
  accountId: string,
  event: { id: string; customerKey: string; before: Date },
  since: Date,
): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(reviewWebhookEvents)
    .where(
      and(
        eq(reviewWebhookEvents.accountId, accountId),
        eq(reviewWebhookEvents.customerKey, event.customerKey),
        ne(reviewWebhookEvents.id, event.id),
        lt(reviewWebhookEvents.createdAt, event.before),
        gte(reviewWebhookEvents.createdAt, since),
        sql`${reviewWebhookEvents.status} in ('processed', 'skipped')`,
      ),
    )
  return row?.total ?? 0
}

/** Every account's events, newest first (the operator's view). */
export const receivedEventsList = keysetList(
  'review_webhook_events',
  reviewWebhookEvents.createdAt,
  reviewWebhookEvents.id,
)
/** An account's events, newest first. */
export const accountEventsList = keysetList(
  'review_account_events',
  reviewWebhookEvents.createdAt,
  reviewWebhookEvents.id,
)

/** A page of the events matching `where`, newest first. */
function newestEventsPage(db: Database, list: KeysetList, where: SQL | undefined, page: ListWindow) {
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(reviewWebhookEvents), ...placeField(list) })
      .from(reviewWebhookEvents)
      .$dynamic(),
    { ...list, from: reviewWebhookEvents, where },
    page,
  )
}

/** The events received, newest first, by status and source: every account's (the operator's view). */
export function listWebhookEvents(
  db: Database,
  filters: { status?: WebhookEventRow['status']; source?: WebhookEventRow['source'] },
  page: ListWindow,
) {
  const conditions: SQL[] = []
  if (filters.status) conditions.push(eq(reviewWebhookEvents.status, filters.status))
  if (filters.source) conditions.push(eq(reviewWebhookEvents.source, filters.source))
  return newestEventsPage(db, receivedEventsList, and(...conditions), page)
}

export interface AccountEventFilters {
  status?: WebhookEventRow['status']
  trigger?: TriggerType
  from?: Date
  to?: Date
}

/** The account's events, newest first, by status, trigger and the time received. */
export function listAccountEvents(
  db: Database,
  accountId: string,
  filters: AccountEventFilters,
  page: ListWindow,
) {
  const conditions: SQL[] = [eq(reviewWebhookEvents.accountId, accountId)]
  if (filters.status) conditions.push(eq(reviewWebhookEvents.status, filters.status))
  if (filters.trigger) conditions.push(eq(reviewWebhookEvents.trigger, filters.trigger))
  if (filters.from) conditions.push(gte(reviewWebhookEvents.createdAt, filters.from))
  if (filters.to) conditions.push(lte(reviewWebhookEvents.createdAt, filters.to))
  return newestEventsPage(db, accountEventsList, and(...conditions), page)
}

export async function findAccountEvent(
  db: Database,
  accountId: string,
  id: string,
): Promise<WebhookEventRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewWebhookEvents)
    .where(and(eq(reviewWebhookEvents.accountId, accountId), eq(reviewWebhookEvents.id, id)))
  return row
}

/** Whether any event of the account, from any source, reported `trigger`. */
export async function hasEventWithTrigger(
  db: Database,
  accountId: string,
  trigger: TriggerType,
): Promise<boolean> {
  const [row] = await db
    .select({ id: reviewWebhookEvents.id })
    .from(reviewWebhookEvents)
    .where(and(eq(reviewWebhookEvents.accountId, accountId), eq(reviewWebhookEvents.trigger, trigger)))
    .limit(1)
  return row !== undefined
}
