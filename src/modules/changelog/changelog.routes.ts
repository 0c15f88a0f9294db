import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { routeOptions } from '../../platform/http/route-options.js'
import { PostsPage, PostsQuery } from './changelog.schemas.js'
import { listChangelogPosts } from './changelog.service.js'

export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/changelog/posts',
    {
      onRequest: app.authenticate,
      ...routeOptions({
        operationId: 'changelogList',
        summary: 'Changelog posts (the upstream feed is disabled: always empty)',
        tags: ['changelog'],
        access: 'bearer',
        querystring: PostsQuery,
        response: { 200: PostsPage },
        errors: [400, 401, 403],
      }),
    },
    async (request) => listChangelogPosts(request.query.page, request.query.per_page),
  )
}
