import { type SQL, type SQLChunk, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'

/** A table as PostgreSQL's catalog describes it: what the export reads and how it pages through it. */
export interface CatalogTable {
  name: string
  /** Its columns in table order, without generated ones (derived from the others: a search vector). */
  columns: string[]
  /** Its primary key's columns in key order: the keyset the export pages on. Empty when it has none. */
  keyColumns: string[]
  hasAccountId: boolean
}

const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows
const list = (items: SQLChunk[]) => sql.join(items, sql`, `)

/**
 * Every table of the service's schema, read from the catalog (not from the modules' table definitions, so
 * that a table added later is seen). A partition is read through its partitioned table, never twice.
 */
export async function listCatalogTables(db: Database): Promise<CatalogTable[]> {
  const result = await db.execute(sql`
    select c.relname::text as name,
      array(select a.attname::text from pg_attribute a
            where a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped and a.attgenerated = ''
            order by a.attnum) as columns,
      array(select a.attname::text
            from pg_index i, unnest(i.indkey) with ordinality as k(attnum, position), pg_attribute a
            where i.indrelid = c.oid and i.indisprimary and a.attrelid = c.oid and a.attnum = k.attnum
            order by k.position) as key_columns,
      exists(select from pg_attribute a
             where a.attrelid = c.oid and a.attname = 'account_id' and not a.attisdropped) as has_account_id
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
    where n.nspname = current_schema() and c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`)
  return rowsOf<{ name: string; columns: string[]; key_columns: string[]; has_account_id: boolean }>(
    result,
  ).map((row) => ({
    name: row.name,
    columns: row.columns,
    keyColumns: row.key_columns,
    hasAccountId: row.has_account_id,
  }))
}

/** The account and every account below it (`parent_account`, at any depth), the account first. */
export async function listAccountFamily(db: Database, accountId: string): Promise<string[]> {
  const result = await db.execute(sql`
    with recursive family(id, depth) as (
      select id, 0 from accounts where id = ${accountId}
      union
      select a.id, f.depth + 1 from accounts a join family f on a.parent_account = f.id
    )
    select id from family order by depth, id`)
  return rowsOf<{ id: string }>(result).map((row) => row.id)
}

/**
 * Which rows of a table belong to the accounts: those whose `column` holds one of the account ids, or,
 * with `referencedBy`, whose `column` is referenced by a row of one of those tables that carries one of
 * the account ids in its `account_id` (a user is reached through the account's memberships).
 */
export interface Ownership {
  column: string
  referencedBy?: { table: string; column: string }[]
}

function ownedRows(ownership: Ownership, accountIds: string[]): SQL {
  const ids = sql`(${list(accountIds.map((id) => sql`${id}`))})`
  const column = sql.identifier(ownership.column)
  if (!ownership.referencedBy) return sql`${column} in ${ids}`
  const references = ownership.referencedBy.map(
    (reference) =>
      sql`select ${sql.identifier(reference.column)} from ${sql.identifier(reference.table)} where account_id in ${ids}`,
  )
  return sql`${column} in (${sql.join(references, sql` union `)})`
}

export interface ExportBatchQuery {
  name: string
  columns: string[]
  keyColumns: string[]
  ownership: Ownership
  accountIds: string[]
  /** The key of the last row of the previous batch; none for the first batch. */
  after: string[] | undefined
  /** Rows read at most. */
  limit: number
  /** Bytes of lines returned at most (past the first line): wide rows make shorter batches. */
  maxBytes: number
}

export interface ExportBatch {
  /** Each row as one NDJSON line, `{"table":…,"row":{…}}`, written by PostgreSQL (identical on PGlite). */
  lines: string[]
  /** The key of the last line, as text: where the next batch starts. */
  lastKey: string[] | undefined
  /** Whether rows may follow: the limit was reached, or maxBytes cut the batch short. */
  more: boolean
}

/**
 * One batch of a table's rows, in primary key order after `after` (keyset paging: each batch is an index
 * range, whatever the depth, and no cursor or connection is held between batches). PostgreSQL writes the
 * JSON, so timestamps, bigints and arrays come out the same on both drivers and Node never parses a row;
 * it also keeps the lines to `maxBytes`, so that a batch of wide rows (email bodies, step HTML) stays small.
 */
export async function readExportBatch(db: Database, query: ExportBatchQuery): Promise<ExportBatch> {
  const keys = query.keyColumns.map((column) => sql.identifier(column))
  // The key columns under names of the export's own, which no column of the table can clash with.
  const keyAliases = query.keyColumns.map((_, position) => sql.identifier(`export_key_${position}`))
  const after = query.after
    ? sql`and (${list(keys)}) > (${list(query.after.map((value) => sql`${value}`))})`
    : sql``
  const result = await db.execute(sql`
    select export_line as line, export_key as key, rows_read
    from (
      select export_line, export_key, ${list(keyAliases)}, count(*) over () as rows_read,
        coalesce(sum(octet_length(export_line)) over (order by ${list(keyAliases)}
          rows between unbounded preceding and 1 preceding), 0) as bytes_before
      from (
        select json_build_object('table', ${query.name}::text, 'row', row_to_json(r))::text as export_line,
          array[${list(keys.map((key) => sql`r.${key}::text`))}] as export_key,
          ${list(keys.map((key, position) => sql`r.${key} as ${keyAliases[position]}`))}
        from (
          select ${list(query.columns.map((column) => sql.identifier(column)))}
          from ${sql.identifier(query.name)}
          where ${ownedRows(query.ownership, query.accountIds)} ${after}
          order by ${list(keys)}
          limit ${query.limit}
        ) r
      ) lines
    ) sized
    where bytes_before < ${query.maxBytes}
    order by ${list(keyAliases)}`)
  const rows = rowsOf<{ line: string; key: string[]; rows_read: string | number }>(result)
  const read = Number(rows[0]?.rows_read ?? 0)
  return {
    lines: rows.map((row) => row.line),
    lastKey: rows.at(-1)?.key,
    more: read === query.limit || rows.length < read,
  }
}
