import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { errorResponses } from '../../platform/http/envelope.js'
import { PostsPage, PostsQuery } from './changelog.schemas.js'
import { listChangelogPosts } from './changelog.service.js'

export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/changelog/posts',
    {
      onRequest: app.authenticate,
      schema: {
        operationId: 'changelogList',
        tags: ['changelog'],
        summary: 'Changelog posts (the upstream feed is disabled: always empty)',
        security: [{ bearer: [] }],
        querystring: PostsQuery,
        response: { 200: PostsPage, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => listChangelogPosts(request.query.page, request.query.per_page),
  )
}
