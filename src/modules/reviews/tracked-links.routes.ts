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
      tags: ['reviews'],
      access: 'public',
      params: Type.Object({ code: Type.String({ maxLength: 64 }) }),
      response: { 302: Type.Null() },
      errors: [404],
    }),
    async (request, reply) => {
      const url = await followTrackedLink({ db: platform.db, log: request.log }, request.params.code, {
        userAgent: request.headers['user-agent'],
      })
      return reply.header('cache-control', 'no-store').redirect(url, 302)
    },
  )
}
