import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Jwks, ServerMetadata } from './metadata.schemas.js'
import { serverMetadata } from './metadata.service.js'

/**
 * What the authorization server publishes of itself: its keys and its metadata. Served over plain HTTP in
 * production too, unlike the server's other routes: public documents, no credential in the request or the
 * answer, which an attacker on a plain HTTP path would forge without asking us; what they name is https
 * (PUBLIC_BASE_URL is, in production).
 */
export const metadataRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/.well-known/jwks.json',
    routeOptions({
      operationId: 'metadataGetJwks',
      summary: 'Public keys of OAuth access tokens (ES256): the current key first, then previous ones',
      description:
        'The public keys that verify OAuth access tokens (ES256 JWTs): the current key first, then previous ' +
        'ones still verifying tokens they signed. For resource servers and apps that check tokens themselves; ' +
        'no credentials.',
      tags: ['oauth'],
      access: 'public',
      response: { 200: Jwks },
      errors: [400],
    }),
    async (_request, reply) => {
      // Short enough that a rotation reaches verifiers well within an access token's hour.
      reply.header('cache-control', 'public, max-age=300')
      return platform.oauthKeys.jwks
    },
  )

  app.get(
    '/.well-known/oauth-authorization-server',
    routeOptions({
      operationId: 'metadataGetAuthorizationServer',
      summary: 'Authorization server metadata (RFC 8414)',
      description:
        "The authorization server's metadata (RFC 8414): its endpoints (authorize, token, introspection, " +
        'revocation, JWKS), the grant types, PKCE methods, client authentication methods and scopes it ' +
        'supports. No credentials; a client library configures itself from it.',
      tags: ['oauth'],
      access: 'public',
      response: { 200: ServerMetadata },
      errors: [400],
    }),
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return serverMetadata(platform.db, platform.config.publicBaseUrl)
    },
  )
}
