import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope, Removed } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { CreateDomainBody, DomainsQuery, FunnelDomain } from './domains.schemas.js'
import { createDomain, listDomainsPage, removeDomain } from './domains.service.js'
import { SITES_READ, SITES_WRITE } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'

/** The account's custom funnel domains, under `/v1/funnels/domains`. */
export const domainsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/domains',
    routeOptions({
      operationId: 'domainList',
      summary: 'List the funnel domains of the account',
      description:
        "The account's custom domains for funnels, `{ _id, name, ssl_enabled }`, by name, paged (`limit` " +
        'default 50, at most 100).',
      tags: ['funnels'],
      access: SITES_READ,
      querystring: DomainsQuery,
      response: { 200: PageEnvelope(FunnelDomain) },
      errors: [400, 401, 403, 429],
    }),
    async (request) => {
      const { data, pagination } = await listDomainsPage(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/domains',
    routeOptions({
      operationId: 'domainCreate',
      summary: 'Add a custom domain (a hostname belongs to one account)',
      description:
        "Adds a hostname (such as shop.example.com) for the account's funnels to be served on; anything " +
        'else answers 400 `name must be a hostname such as shop.example.com`. A hostname belongs to one ' +
        'account only: one already added answers 409 `Domain name already in use`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      body: CreateDomainBody,
      response: { 201: Envelope(FunnelDomain) },
      errors: [400, 401, 403, 409, 429],
      answers: { 409: '`Domain name already in use`: a hostname belongs to one account' },
    }),
    async (request, reply) =>
      reply.status(201).send(ok(await createDomain(db, request.auth.account_id, request.body))),
  )

  app.delete(
    '/domains/:id',
    routeOptions({
      operationId: 'domainDelete',
      summary: 'Delete a domain; its funnels are left without one',
      description:
        "Deletes the domain; its funnels move to the account's default host, without a domain. 409 `Path " +
        'already in use` (naming the funnel) when one of them has a base path a funnel on the default host ' +
        'holds; 404 `Domain not found`.',
      tags: ['funnels'],
      access: SITES_WRITE,
      params: IdParams,
      response: { 200: Envelope(Removed) },
      errors: [400, 401, 403, 404, 409, 429],
      answers: {
        404: '`Domain not found`',
        409: '`Path already in use`: a funnel of the domain would clash on the default host',
      },
    }),
    async (request) => {
      await removeDomain(db, stepCacheOf(platform), request.auth.account_id, request.params.id)
      return ok({ _id: request.params.id, deleted: true as const })
    },
  )
}
