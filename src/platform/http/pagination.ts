import { Type } from '@sinclair/typebox'
import type { Pagination } from './envelope.js'
import { Integer } from './schemas.js'

/** Far beyond any list's last page; page × limit stays a safe integer and a valid OFFSET. */
export const MAX_PAGE = 1_000_000

/** Query schema for `page` and `limit`, with the area's default and maximum page size. */
export const PageQuery = (defaultLimit: number, maxLimit: number) =>
  Type.Object({
    page: Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
    limit: Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
  })

export function pageOffset(page: number, limit: number): number {
  return (page - 1) * limit
}

export function pagination(total: number, page: number, limit: number): Pagination {
  return { total, page, limit, pages: Math.ceil(total / limit) }
}

/** One page of rows fetched for `{ offset, limit }`, shaped by `view`, with its pagination. */
export async function paginate<Row, View>(
  query: { page: number; limit: number },
  fetch: (window: { offset: number; limit: number }) => Promise<{ rows: Row[]; total: number }>,
  view: (row: Row) => View,
): Promise<{ data: View[]; pagination: Pagination }> {
  const { rows, total } = await fetch({ offset: pageOffset(query.page, query.limit), limit: query.limit })
  return { data: rows.map(view), pagination: pagination(total, query.page, query.limit) }
}
