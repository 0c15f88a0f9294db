import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { byAccount } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { ListingsAccounts, ListingsAccountsQuery } from './listings.schemas.js'
import { listListingsAccounts } from './listings.service.js'
import { createListingsApi } from './listings-api.js'

const passThrough = () => (data: unknown) => JSON.stringify(data)

export const listingsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/listings/accounts',
    {
      onRequest: app.authenticate,
      // The schema documents the API's answer; serializing through it would drop or coerce whatever
      // the API adds or changes, and the spec returns the API's JSON as it is.
      serializerCompiler: passThrough,
      ...routeOptions({
        operationId: 'listingsAccountList',
        summary: 'Accounts of the external listings API, for an account linked to a listings entity',
        tags: ['listings'],
        access: 'bearer',
        querystring: ListingsAccountsQuery,
        response: { 200: ListingsAccounts },
        errors: [400, 401, 403, 404, 429, 502, 503],
        config: { rateLimit: { max: 120, timeWindow: '1 minute', keyGenerator: byAccount } },
      }),
    },
    async (request) =>
      listListingsAccounts(
        platform.db,
        createListingsApi(platform.config.listings, request.log),
        request.auth.account_id,
        request.query,
      ),
  )
}
