import { and, arrayContains, asc, eq, getTableColumns, inArray, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { type COMMUNICATION_TYPES, communicationEvents, communications } from './tables.js'

export type CommunicationRow = typeof communications.$inferSelect
export type CommunicationEventRow = typeof communicationEvents.$inferSelect

export async function insertCommunication(
  db: Database,
  accountId: string,
  values: Omit<typeof communications.$inferInsert, 'accountId'>,
): Promise<CommunicationRow> {
  const [row] = await db
    .insert(communications)
    .values({ ...values, accountId })
    .returning()
  if (!row) throw new Error('communication insert returned no row')
  return row
}

export async function findCommunication(
  db: Database,
  accountId: string,
  id: string,
): Promise<CommunicationRow | undefined> {
  const [row] = await db
    .select()
    .from(communications)
    .where(and(eq(communications.accountId, accountId), eq(communications.id, id)))
  return row
}

export interface CommunicationFilters {
  contactId?: string
  conversationId?: string
  type?: (typeof COMMUNICATION_TYPES)[number]
}

/** The account's records, newest first. */
export const communicationsList = keysetList('communications', communications.createdAt, communications.id)

/** The account's records, newest first; contact and conversation match inside the id arrays. */
export async function listCommunications(
  db: Database,
  accountId: string,
  page: CommunicationFilters & ListWindow,
) {
  const filters = [eq(communications.accountId, accountId)]
  if (page.contactId) filters.push(arrayContains(communications.contactIds, [page.contactId]))
  if (page.conversationId) filters.push(arrayContains(communications.conversationIds, [page.conversationId]))
  if (page.type) filters.push(eq(communications.type, page.type))
  const where = and(...filters)
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(communications), ...placeField(communicationsList) })
      .from(communications)
      .$dynamic(),
    { ...communicationsList, from: communications, where },
    page,
  )
}

/** Events oldest first: by the provider's time, then as stored. */
const inEventOrder = [
  asc(communicationEvents.timestamp),
  asc(communicationEvents.createdAt),
  asc(communicationEvents.sgEventId),
]

/** The delivery events of all the given records in one query, oldest first. */
export async function listEventsOf(
  db: Database,
  accountId: string,
  communicationIds: string[],
): Promise<CommunicationEventRow[]> {
  if (communicationIds.length === 0) return []
  return db
    .select()
    .from(communicationEvents)
    .where(
      and(
        eq(communicationEvents.accountId, accountId),
        inArray(communicationEvents.communicationId, communicationIds),
      ),
    )
    .orderBy(...inEventOrder)
}

/**
 * The events of records of many accounts (the operator's outbox of every account), oldest first, in one
 * statement: each record is looked up on its own account's key, `(account_id, communication_id)`.
 */
export async function listEventsOfRecords(
  db: Database,
  records: { accountId: string; id: string }[],
): Promise<CommunicationEventRow[]> {
  if (records.length === 0) return []
  const accountIds = sql.param(records.map((record) => record.accountId))
  const ids = sql.param(records.map((record) => record.id))
  return db
    .select()
    .from(communicationEvents)
    .where(
      sql`(${communicationEvents.accountId}, ${communicationEvents.communicationId})
        in (select * from unnest(${accountIds}::text[], ${ids}::text[]))`,
    )
    .orderBy(...inEventOrder)
}
