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
