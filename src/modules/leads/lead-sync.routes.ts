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
      description:
        "Reads the form's leads from Graph (since the newest stored lead, less an hour) and captures " +
        'those the webhook missed, those that failed before and those that arrived before the claim; it ' +
        'also runs every LEADS_SYNC_INTERVAL_MINUTES. Answers how many were `read`, `new`, `known` and ' +
        "still `failed`, with the page subscription's status. 409 when the campaign is deleted or a sync " +
        "of it is already running; 502 `ERROR_SYNCING_LEADS` with Graph's error.",
      tags: ['leads'],
      access: LEADS_WRITE,
      params: IdParams,
      response: { 200: Envelope(SyncOutcome) },
      errors: [400, 401, 403, 404, 409, 502],
      answers: {
        404: '`Campaign not found`',
        409: '`The campaign is deleted`, or `A sync of this campaign is already running`',
        502: "`ERROR_SYNCING_LEADS`: Graph's error in `additional_info`",
      },
    }),
    async (request) => ok(await syncCampaignNow(deps, request.auth.account_id, request.params.id)),
  )
}
