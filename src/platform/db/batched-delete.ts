import { type SQL, sql } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'
import { rowsOf } from './rows.js'

/**
 * Deletes at most `limit` rows of `table` matching `where`, in one statement: its own short transaction
 * unless `db` is one. The rows are chosen by whatever index serves `where`, then deleted by their `ctid`
 * (a TID scan), so a batch costs what `limit` rows cost, not what the table holds. Rows another transaction
 * holds locked are skipped, never waited for: no writer queues behind a batch, nor a batch behind a writer.
 * Answers how many rows it deleted; called until it answers fewer than `limit`, it deletes them all (but
 * those another transaction held locked meanwhile). `table` is a Drizzle table, or a table's identifier
 * (`sql.identifier(name)`) for a caller that found it in the catalog.
 */
export async function deleteBatch(
  db: Database,
  table: PgTable | SQL,
  where: SQL,
  limit: number,
): Promise<number> {
  const result = await db.execute(
    sql`with deleted as (
      delete from ${table} where ctid = any(array(
        select ctid from ${table} where ${where} limit ${limit} for update skip locked))
      returning 1)
    select count(*)::int as count from deleted`,
  )
  return rowsOf<{ count: number }>(result)[0]?.count ?? 0
}
