import { type Static, Type } from '@sinclair/typebox'
import { MAX_PAGE } from '../../platform/http/pagination.js'
import { Integer } from '../../platform/http/schemas.js'

export const PostsQuery = Type.Object({
  page: Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  per_page: Integer({ minimum: 1, maximum: 100, default: 25 }),
})

export const PostsPage = Type.Object(
  {
    pagination: Type.Object({ page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() }),
    data: Type.Array(Type.Unknown()),
  },
  { title: 'ChangelogPostPage' },
)
export type PostsPage = Static<typeof PostsPage>

/* An example of the API reference (test/openapi-reference.test.ts checks it against its schema). */
export const POSTS_PAGE_EXAMPLE = {
  pagination: { page: 1, per_page: 25, total: 0 },
  data: [],
} satisfies PostsPage
