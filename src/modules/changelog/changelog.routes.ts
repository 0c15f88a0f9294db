import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { routeNotFound } from '../../platform/http/error-handler.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { POSTS_PAGE_EXAMPLE, PostsPage, PostsQuery } from './changelog.schemas.js'
import { listChangelogPosts } from './changelog.service.js'

/**
 * The feed's routes. Their errors, and the 404 of a path under the feed that no route answers, are in the
 * spec's changelog envelope `{ status: false, errno, message, additional_info }`. No rate limit yet: the
 * spec anticipates 429 for when the feed is active (an upstream call per request); today it reads nothing,
 * and it is the bench's light GET, which a limit would both slow and refuse.
 */
const feedRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.setNotFoundHandler(routeNotFound('status'))
  app.get(
    '/posts',
    {
      onRequest: app.authenticate,
      ...routeOptions({
        operationId: 'changelogList',
        summary: 'Changelog posts (the upstream feed is disabled: always empty)',
        description:
          "The product's changelog posts, `per_page` (default 25, at most 100) a page. The upstream feed is " +
          'disabled: the answer is always empty, `{ pagination: { page, per_page, total: 0 }, data: [] }`. Its ' +
          'errors are in the changelog envelope, flagged `status: false`. A user of the account.',
        example: { response: POSTS_PAGE_EXAMPLE },
        tags: ['changelog'],
        access: 'bearer',
        querystring: PostsQuery,
        response: { 200: PostsPage },
        errors: [500],
        errorEnvelope: 'status',
      }),
    },
    async (request) => listChangelogPosts(request.query.page, request.query.per_page),
  )
}

/** The changelog feed, under `/changelog`: a prefix of its own, for its own not-found answer. */
export const changelogRoutes: FastifyPluginAsyncTypebox = async (app) => {
  await app.register(feedRoutes, { prefix: '/changelog' })
}
