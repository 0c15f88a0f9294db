import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { Campaign, CampaignsQuery, CreateCampaignBody } from './campaigns.schemas.js'
import { createCampaign, deleteCampaign, listCampaignsPage } from './campaigns.service.js'
import { LEADS_READ, LEADS_WRITE } from './lead-access.service.js'
import { queueCampaignSync } from './lead-sync.service.js'

/** The account's lead campaigns: which page's lead form feeds its contacts. */
export const campaignsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/socialnet/campaigns',
    routeOptions({
      operationId: 'leadCampaignCreate',
      summary: "Claim a page's lead form: its leads become the account's contacts (409 when claimed)",
      tags: ['leads'],
      access: LEADS_WRITE,
      body: CreateCampaignBody,
      response: { 201: Envelope(Campaign) },
      errors: [400, 401, 403, 409],
    }),
    async (request, reply) => {
      const campaign = await createCampaign(
        {
          db,
          enqueueSync: (tx, accountId, id) => queueCampaignSync(queue, tx, { accountId, campaignId: id }),
        },
        request.auth.account_id,
        request.body,
      )
      return reply.status(201).send(ok(campaign))
    },
  )

  app.get(
    '/socialnet/campaigns',
    routeOptions({
      operationId: 'leadCampaignList',
      summary: "List the account's lead campaigns, with subscription_status and last_lead_at",
      tags: ['leads'],
      access: LEADS_READ,
      querystring: CampaignsQuery,
      response: { 200: PageEnvelope(Campaign) },
      errors: [400, 401, 403],
    }),
    async (request) => {
      const { data, pagination } = await listCampaignsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.delete(
    '/socialnet/campaigns/:id',
    routeOptions({
      operationId: 'leadCampaignDelete',
      summary: 'Mark a lead campaign is_deleted; its leads stay listed',
      tags: ['leads'],
      access: LEADS_WRITE,
      params: IdParams,
      response: { 200: Envelope(Campaign) },
      errors: [400, 401, 403, 404],
    }),
    async (request) => ok(await deleteCampaign(db, request.auth.account_id, request.params.id)),
  )
}
