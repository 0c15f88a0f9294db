import { Readable } from 'node:stream'
import type { Database } from '../../platform/db/connection.js'
import { inTransactionWithTimeout } from '../../platform/db/transaction.js'
import { EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS } from '../../platform/db/waits.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { type CatalogTable, listAccountFamily, listCatalogTables } from './account-catalog.repository.js'
import {
  type AccountTable,
  accountTables,
  BY_ACCOUNT_ID,
  EXPORTED_USERS,
  REACHED_THROUGH,
} from './account-catalog.service.js'
import { readExportBatch } from './account-export.repository.js'
import type { AccountExportEnd, AccountExportHeader } from './account-export.schemas.js'
import { findRemovalOf } from './account-removal.repository.js'

/** The 409 of an export asked for once the account's removal began: export an account before removing it. */
export const EXPORT_OF_REMOVED = 'Account is being removed: export it before removing it'

/** The layout of the lines; raised when a consumer would have to read them differently. */
export const EXPORT_FORMAT_VERSION = 1

/** Rows read per query at most: what the export holds in memory at once, whatever the account's size. */
export const EXPORT_BATCH = 1_000

/** Bytes of lines per query at most: a batch of wide rows (email bodies, step HTML) holds fewer rows. */
export const EXPORT_BATCH_BYTES = 4 * 1024 * 1024

/**
 * Secrets never leave: sealed columns (encrypted under SECRETS_ENCRYPTION_KEY), password hashes and token
 * hashes are left out of the export, and its first line names them.
 */
export const SECRETS_LEFT_OUT: Record<string, string[]> = {
  users: ['password_hash'],
  mail_subusers: ['api_key_encrypted'],
  socialnet_tokens: ['access_token'],
  lead_campaigns: ['page_access_token'],
  oauth_codes: ['code_hash'],
  oauth_refresh_tokens: ['token_hash'],
}

type ExportedTable = AccountTable

/** The tables the export reads, in the order it writes them: the accounts and users first, then by name. */
function exportedTables(catalog: CatalogTable[]): ExportedTable[] {
  const exported = accountTables(catalog).map((table) => {
    if (table.keyColumns.length === 0) throw new Error(`${table.name} has no primary key to export by`)
    const secrets = SECRETS_LEFT_OUT[table.name] ?? []
    const ownership = table.name === 'users' ? EXPORTED_USERS : table.ownership
    return { ...table, ownership, columns: table.columns.filter((column) => !secrets.includes(column)) }
  })
  const first = Object.keys(REACHED_THROUGH)
  const rank = (table: ExportedTable) =>
    first.includes(table.name) ? first.indexOf(table.name) : first.length
  return exported.sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name))
}

/** The rows the next batch reads: as many as the last batch's average line fits in EXPORT_BATCH_BYTES. */
function nextLimit(lines: string[]): number {
  const average = lines.reduce((bytes, line) => bytes + line.length, 0) / lines.length
  return Math.max(1, Math.min(EXPORT_BATCH, Math.floor(EXPORT_BATCH_BYTES / average)))
}

/**
 * Every row of one table the accounts own, batch after batch, each read when the consumer wants the
 * next (the response stream's backpressure); returns how many.
 */
async function* tableLines(
  db: Database,
  table: ExportedTable,
  accountIds: string[],
): AsyncGenerator<string, number> {
  let after: string[] | undefined
  let limit = EXPORT_BATCH
  let rows = 0
  for (;;) {
    const query = { ...table, accountIds, after, limit, maxBytes: EXPORT_BATCH_BYTES }
    const batch = await inTransactionWithTimeout(db, EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS, (tx) =>
      readExportBatch(tx, query),
    )
    rows += batch.lines.length
    if (batch.lines.length > 0) yield `${batch.lines.join('\n')}\n`
    if (!batch.more) return rows
    after = batch.lastKey
    limit = nextLimit(batch.lines)
  }
}

async function* exportLines(db: Database, header: AccountExportHeader, tables: ExportedTable[]) {
  yield `${JSON.stringify({ export: header })}\n`
  const accountIds = [header.account_id, ...header.sub_account_ids]
  const rowsByTable: Record<string, number> = {}
  let rows = 0
  for (const table of tables) {
    // One account at a time: its keyset then runs along an index that starts with the account (the primary
    // key of child rows). With the list of accounts, PostgreSQL sorted all their rows for every batch.
    const scopes = table.ownership === BY_ACCOUNT_ID ? accountIds.map((id) => [id]) : [accountIds]
    let count = 0
    for (const scope of scopes) count += yield* tableLines(db, table, scope)
    rowsByTable[table.name] = count
    rows += count
  }
  const end: AccountExportEnd = { rows, rows_by_table: rowsByTable }
  yield `${JSON.stringify({ export_end: end })}\n`
}

export interface AccountExport {
  fileName: string
  body: Readable
}

/**
 * Everything the account and its sub-accounts own, as NDJSON: a line describing the export, one line per
 * row (`{"table","row"}`), table by table, and a last line with the counts (its absence tells a reader
 * that the export was cut). Read in keyset batches, so memory does not grow with the account. Each batch
 * is its own statement: the export is not one snapshot, so an account is best suspended before.
 */
export async function exportAccount(db: Database, accountId: string): Promise<AccountExport> {
  const [family, catalog] = await Promise.all([listAccountFamily(db, accountId), listCatalogTables(db)])
  // Its rows are going (or gone) batch by batch: an export now would be a part of it, and look whole.
  if (await findRemovalOf(db, accountId)) throw new Conflict(EXPORT_OF_REMOVED)
  if (family.length === 0) throw new NotFound('Account not found')
  const tables = exportedTables(catalog)
  const startedAt = new Date().toISOString()
  const header: AccountExportHeader = {
    format_version: EXPORT_FORMAT_VERSION,
    account_id: accountId,
    sub_account_ids: family.slice(1),
    started_at: startedAt,
    tables: tables.map((table) => table.name),
    secrets_left_out: SECRETS_LEFT_OUT,
  }
  return {
    fileName: `account-${accountId}-${startedAt.slice(0, 10)}.ndjson`,
    body: Readable.from(exportLines(db, header, tables)),
  }
}
