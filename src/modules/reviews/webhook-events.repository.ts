import { and, count, eq, gte, lt, ne, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
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
