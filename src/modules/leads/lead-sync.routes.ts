import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { leadsDepsOf } from './deps.js'
import { LEADS_WRITE } from './lead-access.service.js'
import { SyncOutcome } from './lead-sync.schemas.js'
import { syncCampaignNow } from './lead-sync.service.js'

/** The reconciliation sync of a campaign, on demand (it also runs every LEADS_SYNC_INTERVAL_MINUTES). */
export const leadSyncRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const deps = leadsDepsOf(platform)
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/socialnet/campaigns/:id/sync',
    routeOptions({
      operationId: 'leadCampaignSync',
      summary:
        "Read the form's leads from Graph and capture those the webhook missed; says how many were read, new and known",
      tags: ['leads'],
      access: LEADS_WRITE,
      params: IdParams,
      response: { 200: Envelope(SyncOutcome) },
      errors: [400, 401, 403, 404, 409, 502],
    }),
    async (request) => ok(await syncCampaignNow(deps, request.auth.account_id, request.params.id)),
  )
}
