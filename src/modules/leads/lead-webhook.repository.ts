import { and, eq, isNull, lt, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { leadWebhookEvents } from './tables.js'

export type LeadWebhookEventRow = typeof leadWebhookEvents.$inferSelect

const eventInsert = preparedStatement(
  'lead_webhook_event_insert',
  sql`insert into ${leadWebhookEvents} (id, payload)
    values (${sql.placeholder('id')}, ${sql.placeholder('payload')}::jsonb)`,
)

/**
 * Keeps a verified lead event; its id. Every lead event Meta posts runs it, in autocommit: one prepared
 * statement, the only one before Meta is answered.
 */
export async function insertLeadWebhookEvent(db: Database, payload: unknown): Promise<string> {
  const id = newId()
  await eventInsert(db, { id, payload: JSON.stringify(payload) })
  return id
}

/** The event, locked until the transaction ends, so that two runs of its job cannot both file it. */
export async function lockLeadWebhookEvent(
  db: Database,
  id: string,
): Promise<LeadWebhookEventRow | undefined> {
  const [row] = await db.select().from(leadWebhookEvents).where(eq(leadWebhookEvents.id, id)).for('update')
  return row
}

export async function markLeadWebhookEventProcessed(db: Database, id: string): Promise<void> {
  await db.update(leadWebhookEvents).set({ processedAt: new Date() }).where(eq(leadWebhookEvents.id, id))
}

/** Events still unprocessed that were received before `before`, oldest first. */
export async function findUnprocessedBefore(db: Database, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: leadWebhookEvents.id })
    .from(leadWebhookEvents)
    .where(and(isNull(leadWebhookEvents.processedAt), lt(leadWebhookEvents.receivedAt, before)))
    .orderBy(leadWebhookEvents.receivedAt)
    .limit(limit)
  return rows.map((row) => row.id)
}
