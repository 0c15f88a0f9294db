import { and, eq, getTableColumns } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { reviewSmsMessages } from './tables.js'

export type SentSmsRow = typeof reviewSmsMessages.$inferSelect

/** The review SMS of every account, newest first. */
export const sentSmsList = keysetList('outbox_sms', reviewSmsMessages.createdAt, reviewSmsMessages.id)

/**
 * The review SMS of every account, or of one, newest first. Not scoped to an account: only the operator's
 * outbox page reads across accounts (on a database distributed by account it fans out to every shard).
 */
export function listSentSmsRows(db: Database, page: { accountId?: string } & ListWindow) {
  const where = page.accountId ? eq(reviewSmsMessages.accountId, page.accountId) : undefined
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(reviewSmsMessages), ...placeField(sentSmsList) })
      .from(reviewSmsMessages)
      .$dynamic(),
    { ...sentSmsList, from: reviewSmsMessages, where },
    page,
  )
}

export async function findSentSmsRow(
  db: Database,
  accountId: string,
  id: string,
): Promise<SentSmsRow | undefined> {
  const [row] = await db
    .select()
    .from(reviewSmsMessages)
    .where(and(eq(reviewSmsMessages.accountId, accountId), eq(reviewSmsMessages.id, id)))
  return row
}
