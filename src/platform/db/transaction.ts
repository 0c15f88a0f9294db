import { sql } from 'drizzle-orm'
import type { Database } from './connection.js'

/**
 * Runs `work` in one transaction: everything it writes, and every job it enqueues with the same
 * executor, commits together or not at all. Inside an open transaction it nests as a savepoint.
 */
export function inTransaction<T>(db: Database, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work(tx as unknown as Database))
}

/**
 * Lets the current transaction commit without waiting for its WAL flush (`synchronous_commit = off`).
 * Only for work that a later synchronous commit confirms and that is safe to redo: WAL is written in
 * order, so that later commit (a job's completion) makes this one durable too; a crash before it loses
 * both, and the job runs again.
 */
export async function commitWithoutFlushWait(tx: Database): Promise<void> {
  await tx.execute(sql`set local synchronous_commit = off`)
}

/**
 * Runs `work` in one transaction whose statements may each take up to `ms` instead of the API's
 * DATABASE_STATEMENT_TIMEOUT_MS (`statement_timeout` set for this transaction only). For the work that goes
 * through all of an account's rows batch by batch (EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS): a batch of the
 * largest account may take longer than a request's statement, and a failed batch would fail the whole run.
 */
export function inTransactionWithTimeout<T>(
  db: Database,
  ms: number,
  work: (tx: Database) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (tx) => {
    await tx.execute(sql`select set_config('statement_timeout', ${String(ms)}, true)`)
    return work(tx)
  })
}
