import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { followTrackedLink } from './tracked-links.service.js'

/** `GET /r/:code`, the `{{review.link}}` of review requests: public, answered with a redirect. */
export const trackedLinksRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/r/:code',
    routeOptions({
      operationId: 'reviewTrackedLinkFollow',
      summary: "Counts a review request's click, then redirects to the platform's review page (302)",
      description:
        "Public: the `{{review.link}}` of a review request. Redirects 302 to the platform's review page " +
        "among the account's (or its parent's) review links, never cached by the browser; a person's " +
        "first click on a sent request moves it to `clicked` (which cancels its follow-up), a bot's visit " +
        'counts nothing. 404 `Review link not found` for an unknown code or a platform without a link.',
      tags: ['reviews'],
      access: 'public',
      params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
      response: { 302: Type.Null() },
      errors: [404],
      answers: { 302: "To the platform's review page", 404: '`Review link not found`' },
    }),
    async (request, reply) => {
      const url = await followTrackedLink({ db: platform.db, log: request.log }, request.params.code, {
        userAgent: request.headers['user-agent'],
      })
      return reply.header('cache-control', 'no-store').redirect(url, 302)
    },
  )
}
