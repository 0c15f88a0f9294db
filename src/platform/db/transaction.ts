import type { Database } from './connection.js'

/**
 * Runs `work` in one transaction: everything it writes, and every job it enqueues with the same
 * executor, commits together or not at all. Inside an open transaction it nests as a savepoint.
 */
export function inTransaction<T>(db: Database, work: (tx: Database) => Promise<T>): Promise<T> {
  return db.transaction((tx) => work(tx as unknown as Database))
}
