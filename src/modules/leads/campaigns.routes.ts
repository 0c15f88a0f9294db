import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  CAMPAIGN_EXAMPLE,
  CAMPAIGN_INPUT_EXAMPLE,
  Campaign,
  CampaignsQuery,
  CreateCampaignBody,
} from './campaigns.schemas.js'
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
      description:
        "Claims a Meta page's lead form (`page_id`, `form_id`) for the account: its leads become the " +
        "account's contacts. A page and form belong to one live campaign across all accounts (409 `A live " +
        'campaign already claims this page and form`). Its first sync is queued with it, so leads that ' +
        "arrived before the claim, and those only Graph holds, are picked up. An app's token needs " +
        '`leads.write`.',
      tags: ['leads'],
      access: LEADS_WRITE,
      body: CreateCampaignBody,
      response: { 201: Envelope(Campaign) },
      example: { body: CAMPAIGN_INPUT_EXAMPLE, response: ok(CAMPAIGN_EXAMPLE) },
      errors: [400, 401, 403, 409],
      answers: { 409: '`A live campaign already claims this page and form`' },
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
      description:
        "The account's lead campaigns, each with its page subscription's health (`subscription_status`, " +
        '`subscription_error`), its newest lead (`last_lead_at`) and its last sync; `include_deleted` also ' +
        'lists those marked `is_deleted`. Paged (`limit` default 20, at most 100).',
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
      description:
        "Marks the campaign `is_deleted`: its page's later leads are no longer filed for the account, and " +
        'the leads it captured stay listed. Repeating it changes nothing; 404 `Campaign not found`.',
      tags: ['leads'],
      access: LEADS_WRITE,
      params: IdParams,
      response: { 200: Envelope(Campaign) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Campaign not found`' },
    }),
    async (request) => ok(await deleteCampaign(db, request.auth.account_id, request.params.id)),
  )
}
