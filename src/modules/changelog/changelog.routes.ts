import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { MAX_PAGE } from '../../platform/http/pagination.js'
import { Integer } from '../../platform/http/schemas.js'
import { listChangelogPosts } from './changelog.service.js'

const PostsQuery = Type.Object({
  page: Integer({ minimum: 1, maximum: MAX_PAGE, default: 1 }),
  per_page: Integer({ minimum: 1, maximum: 100, default: 25 }),
})

const PostsPage = Type.Object({
  pagination: Type.Object({ page: Type.Integer(), per_page: Type.Integer(), total: Type.Integer() }),
  data: Type.Array(Type.Unknown()),
})

export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/changelog/posts',
    {
      onRequest: app.authenticate,
      schema: {
        tags: ['changelog'],
        summary: 'Changelog posts (the upstream feed is disabled: always empty)',
        security: [{ bearer: [] }],
        querystring: PostsQuery,
        response: { 200: PostsPage },
      },
    },
    async (request) => listChangelogPosts(request.query.page, request.query.per_page),
  )
}
