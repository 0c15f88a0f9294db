import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { Jwks, ServerMetadata } from './metadata.schemas.js'
import { serverMetadata } from './metadata.service.js'

/** What the authorization server publishes of itself: its keys and its metadata. */
export const metadataRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.get(
    '/.well-known/jwks.json',
    {
      schema: {
        operationId: 'metadataGetJwks',
        tags: ['oauth'],
        summary: 'Public keys of OAuth access tokens (ES256): the current key first, then previous ones',
        response: { 200: Jwks, ...errorResponses(400) },
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
        operationId: 'metadataGetAuthorizationServer',
        tags: ['oauth'],
        summary: 'Authorization server metadata (RFC 8414)',
        response: { 200: ServerMetadata, ...errorResponses(400) },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      return serverMetadata(platform.db, platform.config.publicBaseUrl)
    },
  )
}
