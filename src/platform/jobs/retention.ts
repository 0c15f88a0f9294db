import { setTimeout as delay } from 'node:timers/promises'
import { and, getTableName, lt, type SQL, sql } from 'drizzle-orm'
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core'
import { deleteBatch } from '../db/batched-delete.js'
import type { Database } from '../db/connection.js'
import { lowestIdAt } from '../db/ids.js'
import type { Logger } from '../log/logger.js'
import type { JobQueue } from './queue.js'

/** An event table's retention, declared by the module that owns the table (docs/decisions.md, retention). */
export interface RetentionRule {
  table: PgTable
  /** How long a row is kept once it may go (ms); undefined keeps every row (the setting's `off`). */
  periodMs: number | undefined
  /**
   * The rows that may go at `cutoff` (now less the period): older than it by the table's time column, and
   * done with (a webhook event processed, a token revoked or expired). An index must serve it, so that a
   * batch costs the same in a table of any size. Across accounts by nature: retention is no account's.
   */
  expendable: (cutoff: Date) => SQL
}

/**
 * Rows written before `cutoff` by `time`, found along the primary key: ids start with the second they were
 * made, so an append-only table needs no index of its own on its time (docs/decisions.md, retention).
 */
export const writtenBefore = (id: PgColumn, time: PgColumn, cutoff: Date): SQL =>
  and(lt(id, lowestIdAt(cutoff)), lt(time, cutoff)) as SQL

export interface Retention {
  /** Adds a table's rule; modules call it where they define their jobs. */
  register(rule: RetentionRule): void
  /**
   * Deletes what the rules let go, one batch of each table in turn until none is left or the run's time is
   * up (the next run goes on). Answers the rows deleted by table.
   */
  runOnce(now?: Date): Promise<Record<string, number>>
  /** Ends a run at its next batch (shutdown). */
  stop(): void
}

export interface RetentionOptions {
  db: Database
  log: Logger
  /** Vacuum each table a run deleted from: the database does not by itself (vacuum.ts). */
  vacuum: boolean
  /** Rows per delete statement (default 1000). */
  batchSize?: number
  /** How long one run may delete (default 50 s, inside the minute between runs). */
  maxRunMs?: number
}

/** Runs the retention rules every minute (pg-boss's cron: one run a minute across every instance). */
export const RETENTION_JOB = 'platform.retention'

export function createRetention({
  db,
  log,
  vacuum,
  batchSize = 1000,
  maxRunMs = 50_000,
}: RetentionOptions): Retention {
  const rules: RetentionRule[] = []
  let stopped = false

  return {
    register(rule) {
      rules.push(rule)
    },

    async runOnce(now = new Date()) {
      const started = Date.now()
      const deleted: Record<string, number> = {}
      let pending = rules.flatMap(({ table, periodMs, expendable }) =>
        periodMs === undefined
          ? []
          : [{ table, name: getTableName(table), where: expendable(new Date(now.getTime() - periodMs)) }],
      )
      // One batch of each table in turn: a table with a long backlog does not hold the others back.
      while (pending.length > 0 && !stopped && Date.now() - started < maxRunMs) {
        const left: typeof pending = []
        for (const item of pending) {
          const batchStarted = performance.now()
          const count = await deleteBatch(db, item.table, item.where, batchSize)
          deleted[item.name] = (deleted[item.name] ?? 0) + count
          if (count === batchSize) left.push(item)
          // Resting as long as the batch took, a backlog takes at most half of one connection's time (on the
          // embedded database, of its only one), and the writers have the rest (docs/decisions.md).
          await delay(performance.now() - batchStarted)
        }
        pending = left
      }
      const deletedFrom = rules.filter(({ table }) => (deleted[getTableName(table)] ?? 0) > 0)
      if (vacuum) for (const { table } of deletedFrom) await db.execute(sql`vacuum ${table}`)
      if (deletedFrom.length > 0) log.info({ deleted, ms: Date.now() - started }, 'retention run')
      return deleted
    },

    stop() {
      stopped = true
    },
  }
}

/** The job running `retention` every minute; a failed run is retried by the next. */
export function defineRetentionJob(queue: JobQueue, retention: Retention): void {
  queue.define({
    name: RETENTION_JOB,
    handle: async () => {
      await retention.runOnce()
    },
    cron: '* * * * *',
    retryLimit: 0,
  })
}
