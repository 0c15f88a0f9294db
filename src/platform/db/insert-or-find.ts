import { getTableName, type SQL } from 'drizzle-orm'
import type { PgInsertValue, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

/**
 * Inserts a row whose unique key another may already hold (a retried request, a redelivered event, a
 * concurrent request that won the race), and reads that row back, found by `sameKey`, when the insert
 * changed nothing. `created` says which happened.
 */
export function insertOrFind<T extends PgTable>(
  db: Database,
  table: T,
  values: PgInsertValue<T>,
  sameKey: SQL | undefined,
): Promise<{ row: T['$inferSelect']; created: boolean }> {
  return insertOrReadBack(
    () => db.insert(table).values(values).onConflictDoNothing().returning() as Promise<T['$inferSelect'][]>,
    () =>
      db
        .select()
        .from(table as PgTable)
        .where(sameKey) as Promise<T['$inferSelect'][]>,
    getTableName(table),
  )
}

/**
 * `insertOrFind` for callers that bring their own statements (prepared ones, on a hot path): `insert`
 * answers the inserted row, or none when the key was taken (`on conflict do nothing returning`);
 * `readBack` answers the row holding the key.
 */
export async function insertOrReadBack<Row>(
  insert: () => Promise<Row[]>,
  readBack: () => Promise<Row[]>,
  tableName: string,
): Promise<{ row: Row; created: boolean }> {
  const [inserted] = await insert()
  if (inserted) return { row: inserted, created: true }
  const [existing] = await readBack()
  if (!existing) throw new Error(`${tableName}: a conflicting row was neither inserted nor found`)
  return { row: existing, created: false }
}
