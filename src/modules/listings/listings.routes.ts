import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { byAccount } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { LISTINGS_ACCOUNTS_EXAMPLE, ListingsAccounts, ListingsAccountsQuery } from './listings.schemas.js'
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
        description:
          'The accounts of the external listings API (its `GET /v2/accounts`, with the query given and the API ' +
          "version `v`) for the caller's account, which must be linked to a listings entity (`listings.entity`, " +
          "set by the operator). Answers the API's JSON as it is: `meta` and `response: { count, accounts }`. A " +
          'user of the account.',
        answers: {
          200: "The listings API's answer",
          404: '`Listings not initialized for this account.`: the account has no listings entity',
          502: 'The listings API answered with an error, or could not be reached',
          503: 'The listings API did not answer in time, or LISTINGS_API_KEY is not set',
        },
        example: { response: LISTINGS_ACCOUNTS_EXAMPLE },
        tags: ['listings'],
        access: 'bearer',
        querystring: ListingsAccountsQuery,
        response: { 200: ListingsAccounts },
        errors: [404, 502],
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
