import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { MintedToken, MintTokenBody } from './accounts.schemas.js'
import { mintPlatformToken } from './accounts.service.js'

/** The admin API that mints platform tokens for a member of an account. Guarded by ADMIN_TOKEN. */
export const tokensAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, tokens } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/tokens',
    routeOptions({
      operationId: 'tokenMint',
      summary: 'Mint a platform JWT for a member of an account',
      tags: ['admin'],
      access: 'admin',
      body: MintTokenBody,
      response: { 201: Envelope(MintedToken) },
      errors: [400, 401, 404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await mintPlatformToken(db, tokens, request.body))),
  )
}
