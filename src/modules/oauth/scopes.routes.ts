import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { Scope } from './scopes.schemas.js'
import { listScopes } from './scopes.service.js'

/** The scope table apps ask from, through the admin API (ADMIN_TOKEN). */
export const scopesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/oauth/scopes',
    {
      schema: {
        operationId: 'scopesList',
        tags: ['admin'],
        summary: 'The scopes apps may ask for',
        security: [{ admin: [] }],
        response: { 200: Envelope(Type.Array(Scope)), ...errorResponses(401) },
      },
    },
    async () => ok(await listScopes(platform.db)),
  )
}
