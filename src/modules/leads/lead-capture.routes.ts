import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { ListEnvelope, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { LEADS_READ } from './lead-access.service.js'
import { LEAD_EXAMPLE, Lead, LeadsQuery } from './lead-capture.schemas.js'
import { listLeads } from './lead-capture.service.js'

/** A campaign's leads, under both integration prefixes. */
export const leadCaptureRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/socialnet/campaigns/:id/leads',
    routeOptions({
      operationId: 'leadCaptureList',
      summary: "A campaign's leads, newest first, by status and created_time (from, to)",
      description:
        "The campaign's leads, newest first: what Meta sent (`field_data`), the standard fields read from " +
        'it (full_name, email, phone_number, ...), the contact it made or updated, and its status with the ' +
        'reason of a failure (token_invalid, token_missing, throttled, fetch_failed, no_contact_details). ' +
        'Filters: `status` and `created_time` from `from` to `to`; pages by `page` or `cursor`. 404 ' +
        '`Campaign not found`.',
      tags: ['leads'],
      access: LEADS_READ,
      params: IdParams,
      querystring: LeadsQuery,
      response: { 200: ListEnvelope(Lead) },
      example: { response: okPage([LEAD_EXAMPLE], { total: 1, page: 1, limit: 20, pages: 1 }) },
      errors: [400, 401, 403, 404],
      answers: { 404: '`Campaign not found`' },
    }),
    async (request) => {
      const { data, pagination } = await listLeads(
        db,
        request.auth.account_id,
        request.params.id,
        request.query,
      )
      return okPage(data, pagination)
    },
  )
}
