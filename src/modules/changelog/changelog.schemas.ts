import { Type } from '@sinclair/typebox'

export const PostsQuery = Type.Object({
  page: Type.Integer({ minimum: 1, default: 1 }),
  per_page: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
})

export const PostsPage = Type.Object({
  pagination: Type.Object({ page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() }),
  data: Type.Array(Type.Unknown()),
})
