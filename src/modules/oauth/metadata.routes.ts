import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id } from '../../platform/http/schemas.js'
import { findUsersByEmail } from '../accounts/user-search.service.js'
import { listScopes } from './apps.service.js'
import { LOCALES } from './messages.js'

const Jwks = Type.Object({
  keys: Type.Array(
    Type.Object(
      {
        kty: Type.Literal('EC'),
        crv: Type.Literal('P-256'),
        x: Type.String(),
        y: Type.String(),
        kid: Type.String({ description: 'RFC 7638 thumbprint' }),
        use: Type.Literal('sig'),
        alg: Type.Literal('ES256'),
      },
      { additionalProperties: false },
    ),
  ),
})

const FoundUser = Type.Object({
  _id: Id(),
  email: Type.String(),
  name: Type.String(),
  accounts: Type.Array(Type.Object({ _id: Id(), name: Type.String(), main: Type.Boolean() })),
})

const FindUsersQuery = Type.Composite([
  Type.Object({
    email: Type.String({ minLength: 1, maxLength: 320, description: 'Part of the email, any case' }),
  }),
  PageQuery(10, 50),
])

/** What RFC 8414 has a server say of itself; `issuer` is the `iss` of its tokens and redirects. */
const serverMetadata = (issuer: string, scopes: { scope: string }[]) => ({
  issuer,
  authorization_endpoint: `${issuer}/v1/auth/oauth/authorize`,
  token_endpoint: `${issuer}/v1/auth/oauth/token`,
  revocation_endpoint: `${issuer}/v1/auth/oauth/revoke`,
  introspection_endpoint: `${issuer}/v1/auth/oauth/introspect`,
  jwks_uri: `${issuer}/.well-known/jwks.json`,
  scopes_supported: scopes.map((s) => s.scope),
  response_types_supported: ['code'],
  grant_types_supported: ['authorization_code', 'refresh_token'],
  token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  introspection_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post', 'none'],
  code_challenge_methods_supported: ['S256'],
  authorization_response_iss_parameter_supported: true,
  ui_locales_supported: [...LOCALES],
})

/** The authorization server's endpoints. */
export const oauthRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Public keys of OAuth access tokens (ES256): the current key first, then previous ones',
        response: { 200: Jwks },
      },
    },
    async (_request, reply) => {
      // Short enough that a rotation reaches verifiers well within an access token's hour.
      reply.header('cache-control', 'public, max-age=300')
      return platform.oauthKeys.jwks
    },
  )

  app.get(
    '/.well-known/oauth-authorization-server',
    {
      schema: {
        tags: ['oauth'],
        summary: 'Authorization server metadata (RFC 8414)',
        response: { 200: Type.Record(Type.String(), Type.Unknown()) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return serverMetadata(platform.config.publicBaseUrl, await listScopes(platform.db))
    },
  )

  app.get(
    '/v1/auth/oauth/findUsers',
    {
      // It lists users across accounts: operators only.
      onRequest: app.authenticateAdmin,
      schema: {
        tags: ['oauth'],
        summary: 'Users whose email contains `email`, each with the accounts they belong to',
        security: [{ admin: [] }],
        querystring: FindUsersQuery,
        response: { 200: PageEnvelope(FoundUser) },
      },
    },
    async (request) => {
      const { data, pagination } = await findUsersByEmail(platform.db, request.query)
      return okPage(data, pagination)
    },
  )
}
