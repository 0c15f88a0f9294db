import { and, count, desc, eq, gte, lt, ne, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { reviewWebhookEvents } from './tables.js'

export type WebhookEventRow = typeof reviewWebhookEvents.$inferSelect
type Outcome = Pick<WebhookEventRow, 'status' | 'reason' | 'accountId' | 'customerKey'>

/** The stored event's id, or null when the source sent this event before. */
export async function insertWebhookEvent(
  db: Database,
  values: Pick<WebhookEventRow, 'source' | 'eventId' | 'type' | 'accountId' | 'payload'>,
): Promise<string | null> {
  const [row] = await db
    .insert(reviewWebhookEvents)
    .values(values)
    .onConflictDoNothing()
    .returning({ id: reviewWebhookEvents.id })
  return row?.id ?? null
}

/** The stored event a source sent under `eventId`. */
export async function findWebhookEvent(
  db: Database,
  source: WebhookEventRow['source'],
  eventId: string,
): Promise<WebhookEventRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewWebhookEvents)
    .where(and(eq(reviewWebhookEvents.source, source), eq(reviewWebhookEvents.eventId, eventId)))
  return row
}

/** The event, locked until the transaction ends, so two runs of its job cannot both apply it. */
export async function lockWebhookEvent(db: Database, id: string): Promise<WebhookEventRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewWebhookEvents)
    .where(eq(reviewWebhookEvents.id, id))
    .for('update')
  return row
}

export async function recordOutcome(db: Database, id: string, outcome: Outcome): Promise<void> {
  await db
    .update(reviewWebhookEvents)
    .set({ ...outcome, processedAt: new Date() })
    .where(eq(reviewWebhookEvents.id, id))
}

/** Orders of a customer an account received before `event`, since `since`: its order history. */
export async function countEarlierOrders(
  db: Database,
  event: { id: string; accountId: string; customerKey: string; before: Date },
  since: Date,
): Promise<number> {
  const [row] = await db
    .select({ total: count() })
    .from(reviewWebhookEvents)
    .where(
      and(
        eq(reviewWebhookEvents.accountId, event.accountId),
        eq(reviewWebhookEvents.customerKey, event.customerKey),
        ne(reviewWebhookEvents.id, event.id),
        lt(reviewWebhookEvents.createdAt, event.before),
        gte(reviewWebhookEvents.createdAt, since),
        sql`${reviewWebhookEvents.status} in ('processed', 'skipped')`,
      ),
    )
  return row?.total ?? 0
}

/** The events received, newest first, by status and source: every account's (the operator's view). */
export function listWebhookEvents(
  db: Database,
  filters: { status?: WebhookEventRow['status']; source?: WebhookEventRow['source'] },
  page: { offset: number; limit: number },
) {
  const conditions: SQL[] = []
  if (filters.status) conditions.push(eq(reviewWebhookEvents.status, filters.status))
  if (filters.source) conditions.push(eq(reviewWebhookEvents.source, filters.source))
  const where = and(...conditions)
  return selectPage(
    db,
    db
      .select()
      .from(reviewWebhookEvents)
      .where(where)
      .orderBy(desc(reviewWebhookEvents.createdAt), desc(reviewWebhookEvents.id))
      .$dynamic(),
    { from: reviewWebhookEvents, where },
    page,
  )
}
