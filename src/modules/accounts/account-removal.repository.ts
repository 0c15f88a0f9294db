import { and, eq, type SQL, type SQLChunk, sql } from 'drizzle-orm'
import { deleteBatch } from '../../platform/db/batched-delete.js'
import type { Database } from '../../platform/db/connection.js'
import { rowsOf } from '../../platform/db/rows.js'
import { type CatalogReference, type Ownership, ownedRows } from './account-catalog.repository.js'
import { accountRemovals, accounts } from './tables.js'

export type RemovalRow = typeof accountRemovals.$inferSelect

const list = (items: SQLChunk[]) => sql.join(items, sql`, `)
const idList = (ids: string[]) => sql`(${list(ids.map((id) => sql`${id}`))})`

/** The removal of the account, or of an account above it, that names it; the earliest asked for. */
export async function findRemovalOf(db: Database, accountId: string): Promise<RemovalRow | undefined> {
  const [row] = await db
    .select()
    .from(accountRemovals)
    .where(sql`${accountRemovals.accountIds} @> array[${accountId}]::text[]`)
    .orderBy(accountRemovals.requestedAt)
    .limit(1)
  return row
}

export async function findRemoval(db: Database, rootAccountId: string): Promise<RemovalRow | undefined> {
  const [row] = await db
    .select()
    .from(accountRemovals)
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
  return row
}

/** Records the removal asked for; undefined when one of the same account was recorded meanwhile. */
export async function insertRemoval(
  db: Database,
  values: { rootAccountId: string; accountIds: string[]; reachedRows: Record<string, string[]> },
): Promise<RemovalRow | undefined> {
  const [row] = await db.insert(accountRemovals).values(values).onConflictDoNothing().returning()
  return row
}

/** Marks the accounts removed: from this commit on, every call with their tokens is refused. */
export async function markAccountsRemoved(db: Database, accountIds: string[]): Promise<void> {
  await db
    .update(accounts)
    .set({ status: 'removed', updatedAt: new Date() })
    .where(sql`${accounts.id} in ${idList(accountIds)}`)
}

/** A failed removal queued again. */
export async function requeueRemoval(db: Database, rootAccountId: string): Promise<RemovalRow | undefined> {
  const [row] = await db
    .update(accountRemovals)
    .set({ status: 'queued' })
    .where(and(eq(accountRemovals.rootAccountId, rootAccountId), eq(accountRemovals.status, 'failed')))
    .returning()
  return row
}

/** An attempt of the job begins: `running`, counted, started at the first one's time. */
export async function startAttempt(db: Database, rootAccountId: string): Promise<void> {
  await db
    .update(accountRemovals)
    .set({
      status: 'running',
      attempts: sql`${accountRemovals.attempts} + 1`,
      startedAt: sql`coalesce(${accountRemovals.startedAt}, now())`,
    })
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
}

export async function markProvidersQueued(db: Database, rootAccountId: string): Promise<void> {
  await db
    .update(accountRemovals)
    .set({ providersQueuedAt: new Date() })
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
}

/** Adds a batch's rows to the table's count, and marks the table done when told, in the caller's transaction. */
export async function recordProgress(
  db: Database,
  rootAccountId: string,
  table: string,
  change: { rowsDeleted: number; done: boolean },
): Promise<void> {
  const before = sql`coalesce((${accountRemovals.progress} -> ${table} ->> 'rows_deleted')::bigint, 0)`
  await db
    .update(accountRemovals)
    .set({
      progress: sql`${accountRemovals.progress} || jsonb_build_object(${table}::text, jsonb_build_object(
        'rows_deleted', ${before} + ${change.rowsDeleted}::bigint, 'done', ${change.done}::boolean))`,
    })
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
}

export async function finishRemoval(db: Database, rootAccountId: string): Promise<void> {
  await db
    .update(accountRemovals)
    .set({ status: 'done', finishedAt: new Date() })
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
}

export async function failRemoval(db: Database, rootAccountId: string, lastError: string): Promise<void> {
  await db
    .update(accountRemovals)
    .set({ status: 'failed', lastError })
    .where(eq(accountRemovals.rootAccountId, rootAccountId))
}

/** Deletes one batch of the table's rows matching `where` (batched-delete.ts); how many. */
export function deleteTableBatch(db: Database, table: string, where: SQL, limit: number): Promise<number> {
  return deleteBatch(db, sql`${sql.identifier(table)}`, where, limit)
}

/** Whether a row of the table still matches `where` (one another transaction held through a batch). */
export async function anyRowLeft(db: Database, table: string, where: SQL): Promise<boolean> {
  const result = await db.execute(
    sql`select exists (select from ${sql.identifier(table)} where ${where}) as left`,
  )
  return rowsOf<{ left: boolean }>(result)[0]?.left === true
}

type Reference = CatalogReference & { hasAccountId: boolean }

/**
 * The condition on `table.column` that no row outside the accounts references it: no row of a table with
 * `account_id` of another account, and no row at all of a table without one (`references` into the table).
 */
function referencedOnlyBy(table: string, column: string, references: Reference[], accountIds: string[]): SQL {
  const outside = references
    .filter((reference) => reference.referenced === table && reference.referencedColumn === column)
    .map(
      (reference) =>
        sql`not exists (select from ${sql.identifier(reference.table)} r
          where r.${sql.identifier(reference.column)} = ${sql.identifier(table)}.${sql.identifier(column)}
          ${reference.hasAccountId ? sql`and r.account_id not in ${idList(accountIds)}` : sql``})`,
    )
  return outside.length === 0 ? sql`true` : sql.join(outside, sql` and `)
}

/**
 * The ids (`ownership.column`) of the rows of `table` that `ownership` gives to the accounts and that no row
 * outside them references: what a removal of the accounts takes of a table without `account_id`.
 */
export async function listOnlyOwnedIds(
  db: Database,
  table: string,
  ownership: Ownership,
  accountIds: string[],
  references: Reference[],
): Promise<string[]> {
  const { column } = ownership
  const result = await db.execute(
    sql`select ${sql.identifier(column)}::text as id from ${sql.identifier(table)}
      where ${ownedRows(ownership, accountIds)} and ${referencedOnlyBy(table, column, references, accountIds)}
      order by 1`,
  )
  return rowsOf<{ id: string }>(result).map((row) => row.id)
}

/** The row condition `column in (ids)`. */
export const columnIn = (column: string, ids: string[]): SQL =>
  sql`${sql.identifier(column)} in ${idList(ids)}`
