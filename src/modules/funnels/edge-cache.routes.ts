import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Acknowledged } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { PurgeQuery } from './edge-cache.schemas.js'
import { purgeFunnelCache } from './edge-cache.service.js'
import { FunnelParams } from './funnel-access.schemas.js'
import { SITES_WRITE } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'

/** `DELETE /v1/funnels/:id/cache`: the caller purges its funnel's cached pages, here and at the edge. */
export const edgeCacheRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const deps = {
    db: platform.db,
    stepCache: stepCacheOf(platform),
    edge: platform.config.edge,
    log: platform.log,
  }
  app.addHook('onRequest', app.authenticate)

  app.delete(
    '/:id/cache',
    routeOptions({
      operationId: 'edgeCachePurge',
      summary: "Purge a funnel's cached pages: one step, all steps, or the funnel",
      description:
        "Purges the funnel's cached pages, here and at the edge: one step's with `step_id`, every " +
        "step's with `all=true`, else the funnel-level tag, which covers every page of the funnel under " +
        "any path it had. Answers `{ success: true, message: 'SUCCESS' }`; 502 `Edge cache purge failed` " +
        'when the edge refuses or cannot be reached.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: FunnelParams,
      querystring: PurgeQuery,
      response: { 200: Acknowledged },
      errors: [400, 401, 403, 404, 429, 502],
      answers: { 502: '`Edge cache purge failed`: the edge refused or could not be reached' },
    }),
    async (request) => {
      const { step_id: stepId, all } = request.query
      await purgeFunnelCache(deps, request.auth.account_id, request.params.id, { stepId, all })
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
