import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import type { CommunicationRow } from './communications.repository.js'
import { communications } from './tables.js'

/**
 * The sent records with any of the message ids, oldest first. Deliberately not account-scoped: the
 * inbound webhook carries no account, and the original record is what tells which account the reply
 * belongs to. Everything written afterwards is scoped to that account.
 */
export function findOriginalsByMessageIds(
  db: Database,
  module: string,
  msgIds: string[],
): Promise<CommunicationRow[]> {
  if (msgIds.length === 0) return Promise.resolve([])
  return db
    .select()
    .from(communications)
    .where(
      and(
        eq(communications.module, module),
        eq(communications.type, 'OUTGOING'),
        inArray(communications.msgId, msgIds),
      ),
    )
    .orderBy(asc(communications.createdAt), asc(communications.id))
}

export async function findInboundRecord(
  db: Database,
  accountId: string,
  module: string,
  msgId: string,
): Promise<CommunicationRow | undefined> {
  const [row] = await db
    .select()
    .from(communications)
    .where(
      and(
        eq(communications.accountId, accountId),
        eq(communications.module, module),
        eq(communications.type, 'INCOMING'),
        eq(communications.msgId, msgId),
      ),
    )
  return row
}

/** Undefined when the account already has this reply (same module and Message-ID): a redelivery. */
export async function insertInboundRecord(
  db: Database,
  accountId: string,
  values: Omit<typeof communications.$inferInsert, 'accountId' | 'type'>,
): Promise<CommunicationRow | undefined> {
  const [row] = await db
    .insert(communications)
    .values({ ...values, accountId, type: 'INCOMING' })
    .onConflictDoNothing()
    .returning()
  return row
}
