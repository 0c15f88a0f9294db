import { Type } from '@sinclair/typebox'
import type { FastifyInstance, preValidationAsyncHookHandler } from 'fastify'
import { ID_PATTERN } from '../db/ids.js'
import {
  byIdAlone,
  type CountedPage,
  type KeysetList,
  LIST_TOTAL_CAP,
  type ListPage,
  type ListWindow,
  PAGE_REACH,
  type PageWindow,
  type Place,
} from '../db/page.js'
import type { CursorPagination, Pagination } from './envelope.js'
import { Invalid } from './errors.js'
import { Integer } from './schemas.js'

/** Far beyond any list's last page; page × limit stays a safe integer and a valid OFFSET. */
export const MAX_PAGE = 1_000_000

const pageDescription = (readOn: string) =>
  `From 1; a page starts fewer than ${PAGE_REACH} rows deep ((page - 1) × limit < ${PAGE_REACH})${readOn}`

/** Query schema for `page` and `limit`, with the area's default and maximum page size. */
export const PageQuery = (defaultLimit: number, maxLimit: number, readOn = '') =>
  Type.Object({
    page: Integer({ minimum: 1, maximum: MAX_PAGE, default: 1, description: pageDescription(readOn) }),
    limit: Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
  })

/** The longest cursor the service makes is about 100 characters. */
const CURSOR_MAX_LENGTH = 200

/**
 * Query schema of a list that grows without end: `page` and `limit`, or `cursor` and `limit`. A request with
 * `cursor` is read by keyset and not counted; its pagination is `{ limit, next_cursor }`.
 */
export const CursorPageQuery = (defaultLimit: number, maxLimit: number) =>
  Type.Composite([
    PageQuery(defaultLimit, maxLimit, '; read further with `cursor`'),
    Type.Object({
      cursor: Type.Optional(
        Type.String({
          maxLength: CURSOR_MAX_LENGTH,
          pattern: '^[A-Za-z0-9_-]*$',
          description:
            'Read on from where the last page ended: its `next_cursor` (empty: from the start). Not with `page`; ' +
            'the page is not counted, and answers `pagination: { limit, next_cursor }`',
        }),
      ),
    }),
  ])

/** A 400 naming `field`, worded and detailed as the schema's validation errors are. */
const invalidField = (field: string, message: string) =>
  new Invalid(`${field} ${message}`, [{ field, message }])

/**
 * The window of `page`: refused beyond PAGE_REACH rows deep (an OFFSET reads and discards every row it
 * skips), with a 400 naming `page` and its bound at this `limit`; `readOn` says how to read further.
 */
export function pageWindow(query: { page: number; limit: number }, readOn = ''): PageWindow {
  const offset = (query.page - 1) * query.limit
  if (offset >= PAGE_REACH) {
    const lastPage = Math.ceil(PAGE_REACH / query.limit)
    throw invalidField(
      'page',
      `must be <= ${lastPage} with limit ${query.limit} (pages reach the first ${PAGE_REACH} rows${readOn})`,
    )
  }
  return { offset, limit: query.limit }
}

/**
 * The pagination of a page, whose total was counted up to LIST_TOTAL_CAP + 1: beyond the cap, it says so,
 * and `pages` follows the cap while pages by offset go on to PAGE_REACH rows.
 */
export function pagination(counted: number, page: number, limit: number): Pagination {
  if (counted <= LIST_TOTAL_CAP) return { total: counted, page, limit, pages: Math.ceil(counted / limit) }
  return {
    total: LIST_TOTAL_CAP,
    page,
    limit,
    pages: Math.ceil(LIST_TOTAL_CAP / limit),
    total_exact: false,
  }
}

/** One page of rows fetched for `{ offset, limit }`, shaped by `view`, with its pagination. */
export async function paginate<Row, View>(
  query: { page: number; limit: number },
  fetch: (window: PageWindow) => Promise<CountedPage<Row>>,
  view: (row: Row) => View,
): Promise<{ data: View[]; pagination: Pagination }> {
  const { rows, total } = await fetch(pageWindow(query))
  return { data: rows.map(view), pagination: pagination(total, query.page, query.limit) }
}

/**
 * A cursor: the list's name and the place of the page's last row, as base64url JSON. It carries no right: the
 * list's own filters (the caller's account first) apply to whatever place it names.
 */
function cursorOf(list: KeysetList, place: Place): string {
  const fields = byIdAlone(list) ? [list.name, place.id] : [list.name, place.key, place.id]
  return Buffer.from(JSON.stringify(fields)).toString('base64url')
}

/**
 * A sort key as `placeField` writes a timestamp: UTC, to the microsecond, a date that exists in PostgreSQL,
 * years 0001 to 9999: JavaScript has a year 0, PostgreSQL none (1 BC precedes AD 1) and refuses it.
 */
const TIMESTAMP_KEY = /^(?!0000)\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/
const isTimestampKey = (key: unknown): key is string =>
  typeof key === 'string' &&
  TIMESTAMP_KEY.test(key) &&
  Number.isFinite(Date.parse(`${key.slice(0, 23)}Z`)) &&
  new Date(`${key.slice(0, 23)}Z`).toISOString().slice(0, 23) === key.slice(0, 23)
const isId = (id: unknown): id is string => typeof id === 'string' && new RegExp(ID_PATTERN).test(id)

/** The fields a cursor holds, or undefined when the text is not one the service made (in any list). */
function cursorFields(cursor: string): unknown[] | undefined {
  const text = Buffer.from(cursor, 'base64url')
  // Buffer skips what is not base64url: a cursor must be exactly what the service wrote.
  if (text.toString('base64url') !== cursor) return undefined
  try {
    const fields: unknown = JSON.parse(text.toString('utf8'))
    return Array.isArray(fields) ? fields : undefined
  } catch {
    return undefined
  }
}

/** The place a cursor of `list` names; null for the empty cursor (the start); a 400 naming `cursor` otherwise. */
export function placeOfCursor(list: KeysetList, cursor: string): Place | null {
  if (cursor === '') return null
  const fields = cursorFields(cursor)
  if (!fields || fields[0] !== list.name) throw invalidField('cursor', 'is not a cursor of this list')
  const [, key, id] = byIdAlone(list) ? [fields[0], fields[1], fields[1]] : fields
  if (fields.length !== (byIdAlone(list) ? 2 : 3) || !isId(id) || !(byIdAlone(list) || isTimestampKey(key)))
    throw invalidField('cursor', 'is not a cursor of this list')
  return { key: key as string, id }
}

/**
 * One page of a list that grows without end: by `page` as `paginate` does (saying that `cursor` reads
 * further), or, with `cursor`, the rows after its place, uncounted, with the cursor of the next page.
 * `nextCursor` reads on after the page in either case (by `page`: from its last row, when it is full), for
 * the pages that link to what follows.
 */
export async function paginateList<Row, View>(
  list: KeysetList,
  query: { page: number; limit: number; cursor?: string },
  fetch: (window: ListWindow) => Promise<ListPage<Row>>,
  view: (row: Row) => View,
): Promise<{ data: View[]; pagination: Pagination | CursorPagination; nextCursor: string | null }> {
  const byCursor = query.cursor !== undefined
  const page = await fetch(
    query.cursor === undefined
      ? pageWindow(query, '; read further with cursor')
      : { after: placeOfCursor(list, query.cursor), limit: query.limit },
  )
  const nextCursor = page.next ? cursorOf(list, page.next) : null
  return {
    data: page.rows.map(view),
    pagination: byCursor
      ? { limit: query.limit, next_cursor: nextCursor }
      : pagination(page.total ?? 0, query.page, query.limit),
    nextCursor,
  }
}

/**
 * `cursor` and `page` are two ways of saying where a list starts: a request naming both is refused, 400
 * naming `cursor`. Looked at before validation, which puts in `page`'s default.
 */
const cursorWithoutPage: preValidationAsyncHookHandler = async (request) => {
  const query = request.query as Record<string, unknown> | undefined
  if (query?.cursor !== undefined && query.page !== undefined)
    throw invalidField('cursor', 'must not be sent with page')
}

/** Every route whose query has both `cursor` and `page` refuses them together. Before the modules register. */
export function refuseCursorWithPage(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)
      ?.properties
    if (!properties?.cursor || !properties.page) return
    route.preValidation = [...[route.preValidation ?? []].flat(), cursorWithoutPage]
  })
}
