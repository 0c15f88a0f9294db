import { type SQLChunk, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { rowsOf } from '../../platform/db/rows.js'
import { type Ownership, ownedRows } from './account-catalog.repository.js'

const list = (items: SQLChunk[]) => sql.join(items, sql`, `)

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
