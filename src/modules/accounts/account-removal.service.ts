import { setTimeout as delay } from 'node:timers/promises'
import type { SQL } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction, inTransactionWithTimeout } from '../../platform/db/transaction.js'
import { EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS } from '../../platform/db/waits.js'
import type { Changes } from '../../platform/events/changes.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import { serializeError } from '../../platform/log/error-serializer.js'
import type { Logger } from '../../platform/log/logger.js'
import {
  type CatalogReference,
  listAccountFamily,
  listCatalogReferences,
  listCatalogTables,
} from './account-catalog.repository.js'
import { type AccountTable, accountTables, BY_ACCOUNT_ID, childrenFirst } from './account-catalog.service.js'
import {
  anyRowLeft,
  columnIn,
  deleteTableBatch,
  failRemoval,
  findRemoval,
  findRemovalOf,
  finishRemoval,
  insertRemoval,
  listOnlyOwnedIds,
  markAccountsRemoved,
  markProvidersQueued,
  type RemovalRow,
  recordProgress,
  requeueRemoval,
  startAttempt,
} from './account-removal.repository.js'
import type { AccountRemoval } from './account-removal.schemas.js'
import type { AccessChanges } from './accounts.service.js'

/** Removes the rows of an account's family, table by table (`{ account_id }`: the root account). */
export const ACCOUNT_REMOVAL_JOB = 'accounts.removal'

export interface AccountRemovalJob {
  account_id: string
}

/**
 * Announced once per removal, in the transaction of the job's first attempt, before any row goes: each
 * module that keeps state at a provider for these accounts queues its own clean-up job there, reading
 * what it needs from rows that are still in place. Data: `{ account_ids }`, the root first.
 */
export const ACCOUNT_REMOVED = 'account.removed'

export interface AccountRemovedData {
  account_ids: string[]
}

/** A provider clean-up's retries: each is idempotent, and the provider may be away for a while. */
export const PROVIDER_CLEAN_UP_RETRIES = { retryLimit: 10, retryDelaySeconds: 30, retryBackoff: true }

/** Has `queueCleanUp` queue a module's provider clean-up, with the removed accounts, when ACCOUNT_REMOVED is announced. */
export function onAccountRemoved(
  changes: Changes,
  queueCleanUp: (tx: Database, accountIds: string[]) => Promise<void>,
): void {
  changes.listen(async (tx, change) => {
    if (change.event === ACCOUNT_REMOVED)
      await queueCleanUp(tx, (change.data as AccountRemovedData).account_ids)
  })
}

/** How many ids of a table reached through other rows one delete statement names at most. */
const IDS_PER_SCOPE = 1_000

export interface RemovalSettings {
  /** Rows per delete statement (ACCOUNT_REMOVAL_BATCH_SIZE). */
  batchSize: number
  /** The rest after each batch (ACCOUNT_REMOVAL_PAUSE_MS), which leaves the database to other tenants. */
  pauseMs: number
  /** How long one run of the job deletes before it queues its continuation (below pg-boss's expiry). */
  sliceMs: number
}

export interface RemovalDeps {
  db: Database
  queue: Pick<JobQueue, 'enqueue'>
  access: AccessChanges
  changes: Changes
  log: Logger
  settings: RemovalSettings
}

type Plan = { tables: AccountTable[]; references: (CatalogReference & { hasAccountId: boolean })[] }

/**
 * The tables holding accounts' rows, children before the tables they reference, read from the catalog
 * each time (a table added by a migration while a removal waits is removed too).
 */
async function removalPlan(db: Database): Promise<Plan> {
  const [catalog, references] = await Promise.all([listCatalogTables(db), listCatalogReferences(db)])
  const withAccountId = new Set(catalog.filter((table) => table.hasAccountId).map((table) => table.name))
  return {
    tables: childrenFirst(accountTables(catalog), references),
    references: references.map((reference) => ({
      ...reference,
      hasAccountId: withAccountId.has(reference.table),
    })),
  }
}

/**
 * The rows of tables without `account_id` the removal will take, found before any row goes: those
 * `ownedRows` gives the family that no row outside the family references (a user who is also a member
 * of another account stays; only their rows in the family go).
 */
async function reachedRowsOf(db: Database, plan: Plan, family: string[]) {
  const reached: Record<string, string[]> = {}
  for (const table of plan.tables) {
    if (!table.ownership.referencedBy) continue
    reached[table.name] = await listOnlyOwnedIds(db, table.name, table.ownership, family, plan.references)
  }
  return reached
}

function view(row: RemovalRow, plan: Plan): AccountRemoval {
  const [root, ...below] = row.accountIds
  const tables = plan.tables.map((table) => {
    const progress = row.progress[table.name]
    return {
      table: table.name,
      rows_deleted: Number(progress?.rows_deleted ?? 0),
      done: row.status === 'done' || progress?.done === true,
    }
  })
  return {
    account_id: root ?? row.rootAccountId,
    sub_account_ids: below,
    status: row.status,
    tables,
    rows_deleted: tables.reduce((sum, table) => sum + table.rows_deleted, 0),
    tables_done: tables.filter((table) => table.done).length,
    providers_queued: row.providersQueuedAt !== null,
    attempts: row.attempts,
    last_error: row.lastError,
    requested_at: row.requestedAt.toISOString(),
    started_at: row.startedAt?.toISOString() ?? null,
    finished_at: row.finishedAt?.toISOString() ?? null,
  }
}

/**
 * `DELETE /v1/admin/accounts/:id`: in one transaction the account and every account below it get status
 * `removed` (their tokens are refused from the commit on), the removal is recorded and its job queued.
 * Asked again, the same removal is answered; a failed one is queued again.
 */
export async function requestRemoval(deps: RemovalDeps, accountId: string): Promise<AccountRemoval> {
  const plan = await removalPlan(deps.db)
  const { row, family } = await inTransaction(deps.db, async (tx) => {
    const existing = await findRemovalOf(tx, accountId)
    if (existing) {
      const again = existing.status === 'failed' && (await requeueRemoval(tx, existing.rootAccountId))
      if (again) await enqueueRemoval(deps.queue, tx, again.rootAccountId, `again:${again.attempts}`)
      return { row: again || existing, family: [] }
    }
    const accountIds = await listAccountFamily(tx, accountId)
    if (accountIds.length === 0) throw new NotFound('Account not found')
    const inserted = await insertRemoval(tx, {
      rootAccountId: accountId,
      accountIds,
      reachedRows: await reachedRowsOf(tx, plan, accountIds),
    })
    if (!inserted) throw new Conflict('A removal of this account was asked for at the same time')
    await markAccountsRemoved(tx, accountIds)
    await enqueueRemoval(deps.queue, tx, accountId, 'first')
    return { row: inserted, family: accountIds }
  })
  // Committed: every instance forgets its verdicts and disconnects the accounts' sockets (gateway.ts).
  for (const id of family) await deps.access.changed(id)
  deps.log.info(
    { account_id: row.rootAccountId, accounts: row.accountIds.length },
    'account removal asked for',
  )
  return view(row, plan)
}

function enqueueRemoval(queue: RemovalDeps['queue'], tx: Database, rootAccountId: string, key: string) {
  return queue.enqueue<AccountRemovalJob>(
    tx,
    ACCOUNT_REMOVAL_JOB,
    { account_id: rootAccountId },
    { singletonKey: `${rootAccountId}:${key}` },
  )
}

/** `GET /v1/admin/accounts/:id/removal`: the removal that names the account (its own or its parent's). */
export async function getRemoval(db: Database, accountId: string): Promise<AccountRemoval> {
  const row = await findRemovalOf(db, accountId)
  if (!row) throw new NotFound('No removal of this account')
  return view(row, await removalPlan(db))
}

/** The delete conditions of one table: one per account (along the indexes that start with the account). */
function scopesOf(table: AccountTable, removal: RemovalRow): SQL[] {
  const family = removal.accountIds
  if (table.ownership === BY_ACCOUNT_ID) return family.map((id) => columnIn('account_id', [id]))
  if (table.ownership.referencedBy) {
    const ids = removal.reachedRows[table.name] ?? []
    const scopes: SQL[] = []
    for (let at = 0; at < ids.length; at += IDS_PER_SCOPE)
      scopes.push(columnIn(table.ownership.column, ids.slice(at, at + IDS_PER_SCOPE)))
    return scopes
  }
  // The accounts themselves: the deepest first, as each references its parent.
  return [...family].reverse().map((id) => columnIn(table.ownership.column, [id]))
}

/**
 * Deletes the scope's rows batch by batch, each batch and its count in one transaction, resting after
 * each batch but the last. Rows a writer held locked through a batch are looked for again, after a rest, until none is left.
 */
async function deleteScope(
  deps: RemovalDeps,
  root: string,
  table: string,
  where: SQL,
  endsAt: number,
): Promise<boolean> {
  const { db, settings } = deps
  for (;;) {
    if (Date.now() >= endsAt) return false
    const finished = await inTransactionWithTimeout(
      db,
      EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS,
      async (tx) => {
        const count = await deleteTableBatch(tx, table, where, settings.batchSize)
        if (count > 0) await recordProgress(tx, root, table, { rowsDeleted: count, done: false })
        return count < settings.batchSize && !(await anyRowLeft(tx, table, where))
      },
    )
    if (finished) return true
    if (settings.pauseMs > 0) await delay(settings.pauseMs)
  }
}

/** Where a removal failed, for `last_error`: the table and the error, without any value of a row. */
const describeFailure = (table: string | undefined, error: unknown) => {
  const message = error instanceof Error ? serializeError(error).message : String(error)
  return table ? `${table}: ${message}` : message
}

/**
 * One run of the removal's job: queues the provider clean-up once, then deletes table by table (children
 * first) what is left, for at most `sliceMs`; a run that is not through queues the next. A run killed
 * mid-way is retried by pg-boss and goes on from the committed counts: every delete is of what is left.
 */
export async function runRemoval(deps: RemovalDeps, rootAccountId: string, jobId: string): Promise<void> {
  const { db } = deps
  const removal = await findRemoval(db, rootAccountId)
  if (!removal || removal.status === 'done') return
  await startAttempt(db, rootAccountId)
  const endsAt = Date.now() + deps.settings.sliceMs
  let current: string | undefined
  try {
    if (!removal.providersQueuedAt) {
      await inTransaction(db, async (tx) => {
        const data: AccountRemovedData = { account_ids: removal.accountIds }
        await deps.changes.announce(tx, rootAccountId, ACCOUNT_REMOVED, data)
        await markProvidersQueued(tx, rootAccountId)
      })
    }
    const plan = await removalPlan(db)
    for (const table of plan.tables) {
      if (removal.progress[table.name]?.done) continue
      current = table.name
      for (const where of scopesOf(table, removal)) {
        if (!(await deleteScope(deps, rootAccountId, table.name, where, endsAt))) {
          await enqueueRemoval(deps.queue, db, rootAccountId, `after:${jobId}`)
          return
        }
      }
      await recordProgress(db, rootAccountId, table.name, { rowsDeleted: 0, done: true })
    }
    current = undefined
    await finishRemoval(db, rootAccountId)
  } catch (error) {
    await failRemoval(db, rootAccountId, describeFailure(current, error))
    throw error
  }
  // Sockets that reached an instance which missed the news are closed now that nothing is left.
  for (const id of removal.accountIds) await deps.access.changed(id)
  deps.log.info({ account_id: rootAccountId }, 'account removed')
}
