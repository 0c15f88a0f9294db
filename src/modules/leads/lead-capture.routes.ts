import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { ListEnvelope, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { LEADS_READ } from './lead-access.service.js'
import { Lead, LeadsQuery } from './lead-capture.schemas.js'
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
      tags: ['leads'],
      access: LEADS_READ,
      params: IdParams,
      querystring: LeadsQuery,
      response: { 200: ListEnvelope(Lead) },
      errors: [400, 401, 403, 404],
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
