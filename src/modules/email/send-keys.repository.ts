import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { emailSendKeys } from './tables.js'

export type SendKeyRow = typeof emailSendKeys.$inferSelect

/**
 * Claims the key for a new send: inserted, or taken over when an earlier claim never recorded a send
 * and is older than `staleAfterSeconds` (its process died). False when another send holds it.
 */
export async function insertSendKeyClaim(
  db: Database,
  accountId: string,
  key: string,
  staleAfterSeconds: number,
): Promise<boolean> {
  const rows = await db
    .insert(emailSendKeys)
    .values({ accountId, key })
    .onConflictDoUpdate({
      target: [emailSendKeys.accountId, emailSendKeys.key],
      set: { claimedAt: sql`now()` },
      setWhere: and(
        isNull(emailSendKeys.communicationId),
        sql`${emailSendKeys.claimedAt} < now() - make_interval(secs => ${staleAfterSeconds})`,
      ),
    })
    .returning({ key: emailSendKeys.key })
  return rows.length === 1
}

export async function findSendKey(
  db: Database,
  accountId: string,
  key: string,
): Promise<SendKeyRow | undefined> {
  const [row] = await db
    .select()
    .from(emailSendKeys)
    .where(and(eq(emailSendKeys.accountId, accountId), eq(emailSendKeys.key, key)))
  return row
}

export async function setSendKeyCommunication(
  db: Database,
  accountId: string,
  key: string,
  communicationId: string,
): Promise<void> {
  await db
    .update(emailSendKeys)
    .set({ communicationId })
    .where(and(eq(emailSendKeys.accountId, accountId), eq(emailSendKeys.key, key)))
}

/** Gives a claim up after a failed send, so that a retry with the same key may send. */
export async function deleteSendKeyClaim(db: Database, accountId: string, key: string): Promise<void> {
  await db
    .delete(emailSendKeys)
    .where(
      and(
        eq(emailSendKeys.accountId, accountId),
        eq(emailSendKeys.key, key),
        isNull(emailSendKeys.communicationId),
      ),
    )
}
