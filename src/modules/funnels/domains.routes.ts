import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { IdParams } from '../../platform/http/schemas.js'
import { CreateDomainBody, DomainsQuery, FunnelDomain } from './domains.schemas.js'
import { createDomain, listDomainsPage, removeDomain } from './domains.service.js'
import { funnelRoute } from './funnel-access.routes.js'
import { Removed } from './funnel-access.schemas.js'
import { stepCacheOf } from './step-cache.js'

/** The account's custom funnel domains, under `/v1/funnels/domains`. */
export const domainsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/domains',
    funnelRoute('domainList', 'List the funnel domains of the account', 'read', {
      querystring: DomainsQuery,
      response: { 200: PageEnvelope(FunnelDomain), ...errorResponses(400, 401, 403, 429) },
    }),
    async (request) => {
      const { data, pagination } = await listDomainsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/domains',
    funnelRoute('domainCreate', 'Add a custom domain (a hostname belongs to one account)', 'write', {
      body: CreateDomainBody,
      response: { 201: Envelope(FunnelDomain), ...errorResponses(400, 401, 403, 409, 429) },
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createDomain(db, request.auth.account_id, request.body))),
  )

  app.delete(
    '/domains/:id',
    funnelRoute('domainDelete', 'Delete a domain; its funnels are left without one', 'write', {
      params: IdParams,
      response: { 200: Envelope(Removed), ...errorResponses(400, 401, 403, 404, 409, 429) },
    }),
    async (request) => {
      await removeDomain(db, stepCacheOf(platform), request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true as const })
    },
  )
}
