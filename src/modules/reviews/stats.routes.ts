import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { REVIEWS_READ } from './review-access.service.js'
import { ReviewStats, StatsQuery } from './stats.schemas.js'
import { reviewStats } from './stats.service.js'

/** `GET /reviews/stats`: how many customers were asked, and how many clicked through to leave a review. */
export const statsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/stats',
    routeOptions({
      operationId: 'reviewStatsRead',
      summary:
        'Review requests of a period per platform and per day: sent, skipped by reason, failed, clicked',
      description:
        "The account's review requests created in [`from`, `to`) (default the last 30 days; at most 366 " +
        'days apart), per platform and per UTC day: requested, scheduled, sent, clicked, skipped by reason ' +
        '(frequency_limit, no_review_link, opted_out, ...), failed, and the click-through rate.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: StatsQuery,
      response: { 200: Envelope(ReviewStats) },
      errors: [400, 401, 403, 429],
      config: heavy(),
    }),
    async (request) => ok(await reviewStats(platform.db, request.auth.account_id, request.query)),
  )
}
