import { setImmediate as yieldToOthers } from 'node:timers/promises'
import { type SQL, sql } from 'drizzle-orm'
import type { PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

/**
 * Deletes at most `limit` rows of `table` matching `where`, in one statement: its own short transaction
 * unless `db` is one. The rows are chosen by whatever index serves `where`, then deleted by their `ctid`
 * (a TID scan), so the cost follows `limit`, not the table. Rows that another transaction holds locked are
 * skipped, never waited for: a writer never queues behind the delete, nor the delete behind a writer.
 * Answers how many rows it deleted.
 */
export async function deleteBatch(db: Database, table: PgTable, where: SQL, limit: number): Promise<number> {
  const result = await db.execute(
    sql`with deleted as (
      delete from ${table} where ctid = any(array(
        select ctid from ${table} where ${where} limit ${limit} for update skip locked))
      returning 1)
    select count(*)::int as count from deleted`,
  )
  return (result as unknown as { rows: { count: number }[] }).rows[0]?.count ?? 0
}

export interface BatchOptions {
  /** Rows per statement (default 1000). */
  batchSize?: number
  /** Asked before each batch after the first: false stops (a deadline, a shutdown). */
  goOn?: () => boolean
}

/**
 * Deletes every row of `table` matching `where`, `batchSize` at a time, each batch its own statement,
 * letting other work run between batches (on the embedded database they share its one connection).
 * Stops when a batch comes back short, or when `goOn` says so. Answers how many rows it deleted.
 */
export async function deleteInBatches(
  db: Database,
  table: PgTable,
  where: SQL,
  { batchSize = 1000, goOn = () => true }: BatchOptions = {},
): Promise<number> {
  let total = 0
  for (let first = true; first || goOn(); first = false) {
    const deleted = await deleteBatch(db, table, where, batchSize)
    total += deleted
    if (deleted < batchSize) break
    await yieldToOthers()
  }
  return total
}
