import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { byAccount } from '../../platform/http/rate-limit.js'
import { Integer } from '../../platform/http/schemas.js'
import { listListingsAccounts } from './listings.service.js'
import { createListingsApi } from './listings-api.js'

// The paging parameters the API documents are typed; any other parameter is passed through as a
// string (additional properties allowed), so callers can use API filters this service does not know.
// `v` and the key are never taken from the caller (see listings-api.ts).
const ListingsAccountsQuery = Type.Object(
  {
    limit: Type.Optional(Integer({ minimum: 1 })),
    offset: Type.Optional(Integer({ minimum: 0 })),
    pageToken: Type.Optional(Type.String()),
  },
  { additionalProperties: Type.String() },
)

const ListingsAccount = Type.Object({
  id: Type.String(),
  accountId: Type.String(),
  accountName: Type.String(),
  countryCode: Type.Optional(Type.String()),
  parentAccountId: Type.Optional(Type.String()),
})

const ListingsAccounts = Type.Object(
  {
    meta: Type.Object({
      uuid: Type.String(),
      errors: Type.Array(Type.Object({ code: Type.Integer(), type: Type.String(), message: Type.String() })),
    }),
    response: Type.Object({ count: Type.Integer(), accounts: Type.Array(ListingsAccount) }),
  },
  { description: "The external listings API's answer, unchanged" },
)

const passThrough = () => (data: unknown) => JSON.stringify(data)

export const listingsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/listings/accounts',
    {
      onRequest: app.authenticate,
      config: { rateLimit: { max: 120, timeWindow: '1 minute', keyGenerator: byAccount } },
      schema: {
        tags: ['listings'],
        summary: 'Accounts of the external listings API, for an account linked to a listings entity',
        security: [{ bearer: [] }],
        querystring: ListingsAccountsQuery,
        response: { 200: ListingsAccounts, ...errorResponses(404, 502, 503) },
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
