import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Unsubscribed, UnsubscribeQuery } from './unsubscribe.schemas.js'
import { unsubscribeLinkKey, unsubscribeWithLink } from './unsubscribe.service.js'

/**
 * `POST /mailprovider/unsubscribe?token=`: the target of the List-Unsubscribe header (no auth: the link
 * is signed). The token is a query parameter because it carries the address, longer than a path parameter may be.
 */
export const unsubscribeRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  const linkKey = unsubscribeLinkKey(config.secretsKey, config.jwt.secret)
  // RFC 8058 clients post `List-Unsubscribe=One-Click` form-encoded; the body carries nothing else we need.
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string' },
    (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))),
  )

  app.post(
    '/mailprovider/unsubscribe',
    routeOptions({
      operationId: 'unsubscribeOneClick',
      summary: 'One-click unsubscribe (RFC 8058): puts the address on the do-not-disturb list',
      description:
        'The target of the `List-Unsubscribe` header of every email sent (RFC 8058 one-click): the mail ' +
        "client posts to the signed link and the recipient's address goes on the account's do-not-disturb " +
        "list. No credentials: the link's signature (keyed by SECRETS_ENCRYPTION_KEY) is the proof.",
      answers: {
        200: 'The address is on the do-not-disturb list',
        400: 'The link is not one this service signed',
      },
      tags: ['email'],
      access: 'public',
      querystring: UnsubscribeQuery,
      response: { 200: Envelope(Unsubscribed) },
      errors: [],
      config: { rateLimit: { max: 60, timeWindow: '1 minute', keyGenerator: byIp } },
    }),
    async (request) => {
      await unsubscribeWithLink(db, linkKey, request.query.token)
      return ok({ unsubscribed: true })
    },
  )
}
