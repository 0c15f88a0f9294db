import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { byAccount } from '../../platform/http/rate-limit.js'
import { ListingsAccounts, ListingsAccountsQuery } from './listings.schemas.js'
import { listListingsAccounts } from './listings.service.js'
import { createListingsApi } from './listings-api.js'

const passThrough = () => (data: unknown) => JSON.stringify(data)

export const listingsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/listings/accounts',
    {
      onRequest: app.authenticate,
      config: { rateLimit: { max: 120, timeWindow: '1 minute', keyGenerator: byAccount } },
      schema: {
        operationId: 'listingsAccountList',
        tags: ['listings'],
        summary: 'Accounts of the external listings API, for an account linked to a listings entity',
        security: [{ bearer: [] }],
        querystring: ListingsAccountsQuery,
        response: { 200: ListingsAccounts, ...errorResponses(400, 401, 403, 404, 429, 502, 503) },
      },
      // The schema documents the API's answer; serializing through it would drop or coerce whatever
      // the API adds or changes, and the spec returns the API's JSON as it is.
      serializerCompiler: passThrough,
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
