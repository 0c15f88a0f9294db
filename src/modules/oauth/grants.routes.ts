import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Grant, GrantParams, RevokedGrant } from './grants.schemas.js'
import { listGrants, revokeGrant } from './grants.service.js'

/** `/grants`: the apps a user allowed in their account, and taking an app's access back (platform JWT). */
export const grantsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform

  // Authentication on each route, not the plugin: a route's own hooks run after the plugin's, and plain
  // HTTP in production is refused first (https-required.ts).
  app.get(
    '/grants',
    {
      onRequest: app.authenticate,
      ...routeOptions({
        operationId: 'grantsList',
        summary: 'The apps you allowed in this account',
        tags: ['oauth'],
        access: 'bearer',
        requiresHttps: true,
        // 403: an app's access token, which may not manage grants.
        response: { 200: Envelope(Type.Array(Grant)) },
        errors: [401, 403],
      }),
    },
    async (request) => ok(await listGrants(db, request.auth)),
  )

  app.delete(
    '/grants/:client_id',
    {
      onRequest: app.authenticate,
      ...routeOptions({
        operationId: 'grantsRevoke',
        summary: "Take an app's access back: its consent and refresh tokens go",
        tags: ['oauth'],
        access: 'bearer',
        requiresHttps: true,
        params: GrantParams,
        response: { 200: Envelope(RevokedGrant) },
        errors: [400, 401, 403, 404],
      }),
    },
    async (request) => {
      await revokeGrant(db, platform.revokedGrants, request.auth, request.params.client_id, request.ip)
      return ok({ revoked: true as const })
    },
  )
}
