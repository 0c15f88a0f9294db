import { type Static, Type } from '@sinclair/typebox'
import { Integer, URL_MAX_LENGTH } from '../../platform/http/schemas.js'

// The paging parameters the API documents are typed; any other parameter is passed through as a
// string (additional properties allowed), so callers can use API filters this service does not know.
// `v` and the key are never taken from the caller (see listings-api.ts).
export const ListingsAccountsQuery = Type.Object(
  {
    limit: Type.Optional(Integer({ minimum: 1 })),
    offset: Type.Optional(Integer({ minimum: 0 })),
    // Opaque tokens and filters that travel on in the listings API's URL: no longer than a URL carries.
    pageToken: Type.Optional(Type.String({ maxLength: URL_MAX_LENGTH })),
  },
  { additionalProperties: Type.String({ maxLength: URL_MAX_LENGTH }) },
)

export const ListingsAccount = Type.Object(
  {
    id: Type.String(),
    accountId: Type.String(),
    accountName: Type.String(),
    countryCode: Type.Optional(Type.String()),
    parentAccountId: Type.Optional(Type.String()),
  },
  { title: 'ListingsAccount' },
)

export const ListingsAccounts = Type.Object(
  {
    meta: Type.Object({
      uuid: Type.String(),
      errors: Type.Array(Type.Object({ code: Type.Integer(), type: Type.String(), message: Type.String() })),
    }),
    response: Type.Object({ count: Type.Integer(), accounts: Type.Array(ListingsAccount) }),
  },
  { title: 'ListingsAccountList', description: "The external listings API's answer, unchanged" },
)

/* An example of the API reference (test/openapi-reference.test.ts checks it against its schema). */
export const LISTINGS_ACCOUNTS_EXAMPLE = {
  meta: { uuid: '7c9e6679-7425-40de-944b-e07fc1f90ae7', errors: [] },
  response: {
    count: 1,
    accounts: [{ id: '3208410', accountId: 'acme-dental', accountName: 'Acme Dental', countryCode: 'GB' }],
  },
} satisfies Static<typeof ListingsAccounts>
