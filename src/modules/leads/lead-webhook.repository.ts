import { and, eq, isNull, lt, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { gatherWrites } from '../../platform/db/gathered-writes.js'
import { newId } from '../../platform/db/ids.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { leadWebhookEvents } from './tables.js'

export type LeadWebhookEventRow = typeof leadWebhookEvents.$inferSelect

const eventsInsert = preparedStatement(
  'lead_webhook_events_insert',
  sql`insert into ${leadWebhookEvents} (id, payload)
    select id, payload::jsonb from unnest(${sql.placeholder('ids')}::text[], ${sql.placeholder('payloads')}::text[])
      as event(id, payload)`,
)

/** Writes at once at most, and events per write: a burst of posts becomes a few multi-row inserts. */
const EVENT_WRITES_IN_FLIGHT = 4
const EVENTS_PER_WRITE = 100

/**
 * Keeps verified lead events: each call answers its event's id once the event is committed. Events posted
 * while earlier ones are being written go together in the next insert (one prepared statement in
 * autocommit, so one commit for all), the only statement before Meta is answered (docs/decisions.md). No
 * account: an event is kept as Meta posted it, before its pages are matched to any campaign (it may name
 * several).
 */
export function leadEventWriter(db: Database): (payload: unknown) => Promise<string> {
  const write = gatherWrites<{ id: string; payload: string }>(
    async (events) => {
      await eventsInsert(db, {
        ids: events.map((event) => event.id),
        payloads: events.map((event) => event.payload),
      })
    },
    { maxInFlight: EVENT_WRITES_IN_FLIGHT, maxItems: EVENTS_PER_WRITE },
  )
  return async (payload) => {
    const id = newId()
    await write({ id, payload: JSON.stringify(payload) })
    return id
  }
}

/**
 * The event, locked until the transaction ends, so that two runs of its job cannot both file it. No account:
 * the event belongs to none (leadEventWriter).
 */
export async function lockLeadWebhookEvent(
  db: Database,
  id: string,
): Promise<LeadWebhookEventRow | undefined> {
  const [row] = await db.select().from(leadWebhookEvents).where(eq(leadWebhookEvents.id, id)).for('update')
  return row
}

/** No account: the event belongs to none (leadEventWriter). */
export async function markLeadWebhookEventProcessed(db: Database, id: string): Promise<void> {
  await db.update(leadWebhookEvents).set({ processedAt: new Date() }).where(eq(leadWebhookEvents.id, id))
}

/** Events still unprocessed that were received before `before`, oldest first. No account: a sweep. */
export async function findUnprocessedBefore(db: Database, before: Date, limit: number): Promise<string[]> {
  const rows = await db
    .select({ id: leadWebhookEvents.id })
    .from(leadWebhookEvents)
    .where(and(isNull(leadWebhookEvents.processedAt), lt(leadWebhookEvents.receivedAt, before)))
    .orderBy(leadWebhookEvents.receivedAt)
    .limit(limit)
  return rows.map((row) => row.id)
}
