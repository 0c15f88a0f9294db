import { and, desc, eq, ilike, inArray, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { insertOrFind } from '../../platform/db/insert-or-find.js'
import { selectPage } from '../../platform/db/page.js'
import { containsPattern } from '../../platform/db/search.js'
import { doNotDisturbEntries } from './tables.js'

export type DoNotDisturbRow = typeof doNotDisturbEntries.$inferSelect

const lowerValue = sql<string>`lower(${doNotDisturbEntries.value})`

/** Inserts the entry, or finds the one already listed for the address (in any case). */
export function insertOrFindDoNotDisturbEntry(
  db: Database,
  accountId: string,
  values: Pick<DoNotDisturbRow, 'value' | 'type' | 'reason'>,
): Promise<{ row: DoNotDisturbRow; created: boolean }> {
  return insertOrFind(
    db,
    doNotDisturbEntries,
    { ...values, accountId },
    and(eq(doNotDisturbEntries.accountId, accountId), eq(lowerValue, values.value.toLowerCase())),
  )
}

/** The lower-cased addresses among `values` that are on the account's list. */
export async function findListedValues(db: Database, accountId: string, values: string[]): Promise<string[]> {
  if (values.length === 0) return []
  const rows = await db
    .select({ value: lowerValue })
    .from(doNotDisturbEntries)
    .where(
      and(
        eq(doNotDisturbEntries.accountId, accountId),
        inArray(
          lowerValue,
          values.map((v) => v.toLowerCase()),
        ),
      ),
    )
  return rows.map((row) => row.value)
}

export async function listDoNotDisturbEntries(
  db: Database,
  accountId: string,
  page: { search?: string; offset: number; limit: number },
): Promise<{ rows: DoNotDisturbRow[]; total: number }> {
  const filters = [eq(doNotDisturbEntries.accountId, accountId)]
  if (page.search) {
    filters.push(ilike(doNotDisturbEntries.value, containsPattern(page.search)))
  }
  const where = and(...filters)
  return selectPage(
    db,
    db
      .select()
      .from(doNotDisturbEntries)
      .where(where)
      .orderBy(desc(doNotDisturbEntries.createdAt), desc(doNotDisturbEntries.id))
      .$dynamic(),
    { from: doNotDisturbEntries, where },
    page,
  )
}

export async function deleteDoNotDisturbEntry(
  db: Database,
  accountId: string,
  entryId: string,
): Promise<boolean> {
  const rows = await db
    .delete(doNotDisturbEntries)
    .where(and(eq(doNotDisturbEntries.accountId, accountId), eq(doNotDisturbEntries.id, entryId)))
    .returning({ id: doNotDisturbEntries.id })
  return rows.length === 1
}
