import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { userAgentOf } from './forms.routes.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
import {
  CodeParams,
  FollowParams,
  ShortenQuery,
  ShortLinkStats,
  ShortUrl,
  StatsQuery,
} from './short-links.schemas.js'
import { followShortLink, shortenFunnel, shortLinkStats, visitorHashKey } from './short-links.service.js'

/** Longest referrer kept with a click. */
const MAX_REFERRER = 2_000

/** A funnel's short link for its account: made by `POST /shorten`, read with its clicks. */
export const shortLinksRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/shorten',
    routeOptions({
      operationId: 'shortLinksShorten',
      summary:
        "The funnel's short link (`data`: its URL): made on the first call (201), the same one after (200)",
      description:
        "The funnel's short link: `data` is its URL, `PUBLIC_BASE_URL/s/<code>` with a code of 6 " +
        'characters. Made on the first call (201); every later call returns the same link (200). Its ' +
        'clicks are counted: `GET /v1/funnels/shorten/{code}` reads them.',
      tags: ['funnels'],
      access: SITES_WRITE,
      querystring: ShortenQuery,
      response: { 200: Envelope(ShortUrl), 201: Envelope(ShortUrl) },
      errors: [400, 401, 403, 404, 429],
      answers: { 200: "The funnel's short link, made before", 201: 'The short link, made now' },
    }),
    async (request, reply) => {
      const { url, created } = await shortenFunnel(
        db,
        config.publicBaseUrl,
        request.auth.account_id,
        request.query.funnel_id,
      )
      return reply.status(created ? 201 : 200).send(ok(url))
    },
  )

  app.get(
    '/shorten/:code',
    routeOptions({
      operationId: 'shortLinksRead',
      summary: 'A short link with its click totals and clicks per day',
      description:
        'One short link of the account with its click totals (`total`, `unique`, `bots`) and its clicks ' +
        'per day from `from` to `to` (days, UTC; by default the last 30 days; at most 366 days apart), ' +
        'read from the daily roll-up. 404 `Short link not found`.',
      tags: ['funnels'],
      access: SITES_READ,
      params: CodeParams,
      querystring: StatsQuery,
      response: { 200: Envelope(ShortLinkStats) },
      errors: [400, 401, 403, 404, 429],
      answers: { 404: '`Short link not found`' },
    }),
    async (request) =>
      ok(
        await shortLinkStats(
          db,
          config.publicBaseUrl,
          request.auth.account_id,
          request.params.code,
          request.query,
        ),
      ),
  )
}

/** `GET /s/:code`, public: the redirect a short link is, each click recorded. */
export const shortLinkRedirectRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  const { db, config } = platform
  const settings = { publicBaseUrl: config.publicBaseUrl, visitorKey: visitorHashKey(config.secretsKey) }

  app.get(
    '/s/:code',
    routeOptions({
      operationId: 'shortLinksFollow',
      summary: "Follow a short link: 302 to the funnel's public URL, the click recorded",
      description:
        "Public: records the click (with a keyed hash of the visitor's IP and user agent, never the IP " +
        "itself, and the referrer; no user agent or a crawler's counts as a bot), then redirects 302 to " +
        "the funnel's public URL, never cached by the browser. 404 `Short link not found`.",
      tags: ['funnels'],
      access: 'public',
      params: FollowParams,
      response: { 302: { description: "Redirect to the funnel's public URL", type: 'null' } },
      errors: [404],
      answers: { 404: '`Short link not found`' },
    }),
    async (request, reply) => {
      const location = await followShortLink(db, settings, request.params.code, {
        ip: request.ip,
        userAgent: userAgentOf(request),
        referrer: request.headers.referer?.slice(0, MAX_REFERRER),
      })
      // Not cached by the browser: every click comes back to be counted.
      return reply.header('cache-control', 'no-store').redirect(location, 302)
    },
  )
}
