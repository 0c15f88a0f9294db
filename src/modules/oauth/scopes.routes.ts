import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Scope } from './scopes.schemas.js'
import { listScopes } from './scopes.service.js'

/** The scope table apps ask from, through the admin API (ADMIN_TOKEN). */
export const scopesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/oauth/scopes',
    routeOptions({
      operationId: 'scopesList',
      summary: 'The scopes apps may ask for',
      description:
        'The scopes an app may be registered for and ask for, each with what it allows. Operator only.',
      tags: ['admin'],
      access: 'admin',
      response: { 200: Envelope(Type.Array(Scope)) },
      errors: [],
    }),
    async () => ok(await listScopes(platform.db)),
  )
}
