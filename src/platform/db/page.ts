import { and, asc, count, desc, type SQL, sql } from 'drizzle-orm'
import type { PgColumn, PgSelect, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

/**
 * How many rows a list's total counts at most. Without a bound, a count() over a million matching rows ran on
 * every page request; beyond it the response says its total is not exact. At 10,000 the count of
 * a large account's list still cost it a third of its throughput (docs/decisions.md).
 */
export const LIST_TOTAL_CAP = 1_000

/**
 * How deep pages by offset reach: an OFFSET reads and discards every row it skips. A list that grows without
 * end is read further with a cursor.
 */
export const PAGE_REACH = 10_000

/** A page by offset: `offset` stays below PAGE_REACH (see `pageWindow`). */
export interface PageWindow {
  offset: number
  limit: number
}

/** Where a row stands in its list: its sort key as text (a timestamp to the microsecond, or the id) and its id. */
export interface Place {
  key: string
  id: string
}

/** The rows after a place (none: from the start), read by keyset instead of offset. */
export interface CursorWindow {
  after: Place | null
  limit: number
}

export type ListWindow = PageWindow | CursorWindow

/** A page by offset and the total it is a page of, counted up to LIST_TOTAL_CAP + 1. */
export interface CountedPage<Row> {
  rows: Row[]
  total: number
}

/**
 * A page of a list that grows without end, with the place to read on from: after a cursor, uncounted, `next`
 * is null on the last page; by offset, with its total, `next` is the last row's place when the page is full.
 */
export interface ListPage<Row> {
  rows: Row[]
  total?: number
  next: Place | null
}

export const isCursorWindow = (window: ListWindow): window is CursorWindow => 'after' in window

/**
 * A list ordered by a sort key then the id, both descending (newest first) or both ascending: what a keyset
 * reads, served by an index on (account_id, key, id). `key` is a timestamp column, or the id itself. `name`
 * goes into the list's cursors, so that a cursor of another list is refused.
 */
export interface KeysetList {
  name: string
  key: PgColumn
  id: PgColumn
  direction: 'asc' | 'desc'
}

export const keysetList = (
  name: string,
  key: PgColumn,
  id: PgColumn,
  direction: 'asc' | 'desc' = 'desc',
): KeysetList => ({ name, key, id, direction })

/** Whether the list is ordered by its id alone (ids start with their time). */
export const byIdAlone = (list: KeysetList) => list.key === list.id

/**
 * The select field carrying each row's sort key as text, spread into the list's select: a timestamp to the
 * microsecond it is stored with (a JavaScript date keeps milliseconds, and a cursor made from it would skip
 * the rows sharing its millisecond).
 */
export const placeField = (list: KeysetList) => ({
  listPlace: byIdAlone(list)
    ? sql<string>`${list.id}`
    : sql<string>`to_char(${list.key} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
})

/** The rows that come after `place` in the list's order: one row comparison, an index range. */
function afterPlace(list: KeysetList, place: Place): SQL {
  const beyond = list.direction === 'desc' ? sql`<` : sql`>`
  return byIdAlone(list)
    ? sql`${list.id} ${beyond} ${place.id}`
    : sql`(${list.key}, ${list.id}) ${beyond} (${place.key}::timestamptz, ${place.id})`
}

function orderOf(list: KeysetList): SQL[] {
  const direction = list.direction === 'desc' ? desc : asc
  return byIdAlone(list) ? [direction(list.id)] : [direction(list.key), direction(list.id)]
}

/**
 * How many rows `where` matches in `from`, counting at most LIST_TOTAL_CAP + 1: an index-only count of that
 * many entries at most, whatever the account holds.
 */
export async function countUpToCap(db: Database, from: PgTable, where: SQL | undefined): Promise<number> {
  const matching = db
    .select({ one: sql`1` })
    .from(from)
    .where(where)
    .limit(LIST_TOTAL_CAP + 1)
    .as('matching')
  const [row] = await db.select({ total: count() }).from(matching)
  return row?.total ?? 0
}

/** `countUpToCap` for a statement written in SQL: `rows` is its `select … from … where …`, without a limit. */
export const countUpToCapSql = (rows: SQL) =>
  sql`select count(*)::int as total from (${rows} limit ${sql.raw(String(LIST_TOTAL_CAP + 1))}) as matching`

/**
 * One page of a list and the total it is a page of. `rows` is the list's ordered query (`$dynamic()`), given
 * its window here; the total counts `where` in `from`, which need not join what the page shows, up to
 * LIST_TOTAL_CAP + 1. Both are sent at once, so on PostgreSQL they run side by side on two connections.
 */
export async function selectPage<Q extends PgSelect>(
  db: Database,
  rows: Q,
  counted: { from: PgTable; where: SQL | undefined },
  window: PageWindow,
): Promise<CountedPage<Awaited<Q>[number]>> {
  const [page, total] = await Promise.all([
    rows.limit(window.limit).offset(window.offset),
    countUpToCap(db, counted.from, counted.where),
  ])
  return { rows: page as Awaited<Q>, total }
}

/**
 * One page of a list that grows without end: by offset with its total (as `selectPage`), or after a cursor's
 * place by keyset, uncounted, reading one row more than the page to know whether another follows. `rows` is
 * the list's select with `placeField(list)` and its joins (`$dynamic()`), without `where` or order: both are
 * given here, from `where` and the list.
 */
export async function selectListPage<Q extends PgSelect>(
  db: Database,
  rows: Q,
  list: KeysetList & { from: PgTable; where: SQL | undefined },
  window: ListWindow,
): Promise<ListPage<Awaited<Q>[number]>> {
  if (!isCursorWindow(window)) {
    const page = await selectPage(db, rows.where(list.where).orderBy(...orderOf(list)), list, window)
    return { ...page, next: page.rows.length === window.limit ? placeOfLast(page.rows) : null }
  }
  const where = window.after ? and(list.where, afterPlace(list, window.after)) : list.where
  const read = (await rows
    .where(where)
    .orderBy(...orderOf(list))
    .limit(window.limit + 1)) as Awaited<Q>[number][]
  const page = read.slice(0, window.limit)
  return { rows: page, next: read.length > window.limit ? placeOfLast(page) : null }
}

/** The place of the last of the rows, read through `placeField`. */
function placeOfLast(rows: unknown[]): Place | null {
  const last = rows.at(-1) as { id: string; listPlace: string } | undefined
  return last ? { key: last.listPlace, id: last.id } : null
}
