import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { Unsubscribed, UnsubscribeQuery } from './unsubscribe.schemas.js'
import { unsubscribeWithLink } from './unsubscribe.service.js'

/**
 * `POST /mailprovider/unsubscribe?token=`: the target of the List-Unsubscribe header (no auth: the link
 * is signed). The token is a query parameter because it carries the address, longer than a path parameter may be.
 */
export const unsubscribeRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  // RFC 8058 clients post `List-Unsubscribe=One-Click` form-encoded; the body carries nothing else we need.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )

  app.post(
    '/mailprovider/unsubscribe',
    {
      config: { rateLimit: { max: 60, timeWindow: '1 minute', keyGenerator: byIp } },
      schema: {
        operationId: 'unsubscribeOneClick',
        tags: ['email'],
        summary: 'One-click unsubscribe (RFC 8058): puts the address on the do-not-disturb list',
        querystring: UnsubscribeQuery,
        response: {
          200: Envelope(Unsubscribed),
          ...errorResponses(400, 429),
        },
      },
    },
    async (request) => {
      await unsubscribeWithLink(platform.db, platform.config, request.query.token)
      return ok({ unsubscribed: true })
    },
  )
}
