import { Type } from '@sinclair/typebox'
import type { Pagination } from './envelope.js'

/** Query schema for `page` and `limit`, with the area's default and maximum page size. */
export const PageQuery = (defaultLimit: number, maxLimit: number) =>
  Type.Object({
    page: Type.Integer({ minimum: 1, default: 1 }),
    limit: Type.Integer({ minimum: 1, maximum: maxLimit, default: defaultLimit }),
  })

export function pageOffset(page: number, limit: number): number {
  return (page - 1) * limit
}

export function pagination(total: number, page: number, limit: number): Pagination {
  return { total, page, limit, pages: Math.ceil(total / limit) }
}
