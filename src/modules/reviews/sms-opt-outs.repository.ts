import { and, desc, eq, inArray, type SQL } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { reviewSmsMessages, reviewSmsOptOuts } from './tables.js'

export type SmsOptOutRow = typeof reviewSmsOptOuts.$inferSelect

/**
 * The accounts that sent a review SMS to `phone`, each with the senders it used. Across accounts on purpose:
 * a customer's reply names only the two numbers, and is answered for every account that texted them.
 */
export function sendersToPhone(
  db: Database,
  phone: string,
): Promise<{ accountId: string; from: string | null }[]> {
  return db
    .selectDistinct({ accountId: reviewSmsMessages.accountId, from: reviewSmsMessages.from })
    .from(reviewSmsMessages)
    .where(eq(reviewSmsMessages.to, phone))
}

/** Opts `phone` out for each account; an account that already has it keeps its one row. */
export async function insertOptOuts(
  db: Database,
  accountIds: string[],
  optOut: { phone: string; keyword: string },
): Promise<void> {
  if (accountIds.length === 0) return
  await db
    .insert(reviewSmsOptOuts)
    .values(accountIds.map((accountId) => ({ accountId, ...optOut })))
    .onConflictDoNothing()
}

export async function deleteOptOuts(db: Database, accountIds: string[], phone: string): Promise<void> {
  if (accountIds.length === 0) return
  await db
    .delete(reviewSmsOptOuts)
    .where(and(inArray(reviewSmsOptOuts.accountId, accountIds), eq(reviewSmsOptOuts.phone, phone)))
}

export async function hasOptOut(db: Database, accountId: string, phone: string): Promise<boolean> {
  const [row] = await db
    .select({ id: reviewSmsOptOuts.id })
    .from(reviewSmsOptOuts)
    .where(and(eq(reviewSmsOptOuts.accountId, accountId), eq(reviewSmsOptOuts.phone, phone)))
    .limit(1)
  return row !== undefined
}

export function listOptOuts(
  db: Database,
  accountId: string,
  filters: { phone?: string },
  page: { offset: number; limit: number },
) {
  const conditions: SQL[] = [eq(reviewSmsOptOuts.accountId, accountId)]
  if (filters.phone) conditions.push(eq(reviewSmsOptOuts.phone, filters.phone))
  const where = and(...conditions)
  return selectPage(
    db,
    db
      .select()
      .from(reviewSmsOptOuts)
      .where(where)
      .orderBy(desc(reviewSmsOptOuts.createdAt), desc(reviewSmsOptOuts.id))
      .$dynamic(),
    { from: reviewSmsOptOuts, where },
    page,
  )
}
