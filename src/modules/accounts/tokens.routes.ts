import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import {
  MintedToken,
  MintTokenBody,
  PLATFORM_TOKEN_EXAMPLE,
  PLATFORM_TOKEN_INPUT_EXAMPLE,
} from './accounts.schemas.js'
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
      description:
        'Mints a platform JWT for a user acting in an account they are a member of: the `bearer` token of ' +
        'every account-scoped route, with every scope. `ttl` is its lifetime in seconds (default 3600). The ' +
        "CLI's `token` command calls this. Operator only.",
      answers: {
        201: 'The token and when it expires',
        404: 'No such user or account, or the user is not a member',
        409: 'The account is being removed, or was',
      },
      example: { body: PLATFORM_TOKEN_INPUT_EXAMPLE, response: ok(PLATFORM_TOKEN_EXAMPLE) },
      tags: ['admin'],
      access: 'admin',
      body: MintTokenBody,
      response: { 201: Envelope(MintedToken) },
      errors: [404, 409],
    }),
    async (request, reply) => reply.status(201).send(ok(await mintPlatformToken(db, tokens, request.body))),
  )
}
