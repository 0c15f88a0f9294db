import { type Static, Type } from '@sinclair/typebox'
import { MAX_PAGE } from '../../platform/http/pagination.js'
import { Integer } from '../../platform/http/schemas.js'

export const PostsQuery = Type.Object({
  page: Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  per_page: Integer({ minimum: 1, maximum: 100, default: 25 }),
})

export const PostsPage = Type.Object({
  pagination: Type.Object({ page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() }),
  data: Type.Array(Type.Unknown()),
})
export type PostsPage = Static<typeof PostsPage>
