import { getTableName, type SQL } from 'drizzle-orm'
import type { PgInsertValue, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

/**
 * Inserts a row whose unique key another may already hold (a retried request, a redelivered event, a
 * concurrent request that won the race), and reads that row back, found by `sameKey`, when the insert
 * changed nothing. `created` says which happened.
 */
export async function insertOrFind<T extends PgTable>(
  db: Database,
  table: T,
  values: PgInsertValue<T>,
  sameKey: SQL | undefined,
): Promise<{ row: T['$inferSelect']; created: boolean }> {
  const [inserted] = await db.insert(table).values(values).onConflictDoNothing().returning()
  if (inserted) return { row: inserted as T['$inferSelect'], created: true }
  const [existing] = await db
    .select()
    .from(table as PgTable)
    .where(sameKey)
  if (!existing) throw new Error(`${getTableName(table)}: a conflicting row was neither inserted nor found`)
  return { row: existing as T['$inferSelect'], created: false }
}
