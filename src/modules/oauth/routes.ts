import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'

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

/** The authorization server's public endpoints. */
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
}
