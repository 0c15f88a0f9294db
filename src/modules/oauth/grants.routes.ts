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
        description:
          'The apps the calling user allowed in this account, each with the scopes granted and when. A user ' +
          "with a platform JWT: an app's own access token may not manage grants (403).",
        tags: ['oauth'],
        access: 'bearer',
        requiresHttps: true,
        // 403: an app's access token, which may not manage grants.
        response: { 200: Envelope(Type.Array(Grant)) },
        errors: [],
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
        description:
          "Takes the app's access back in this account: the consent goes and its refresh tokens stop working at " +
          'once, its access tokens within seconds; the app must ask the user again. A user with a platform JWT.',
        answers: { 404: 'The app holds no grant of this user in this account' },
        tags: ['oauth'],
        access: 'bearer',
        requiresHttps: true,
        params: GrantParams,
        response: { 200: Envelope(RevokedGrant) },
        errors: [404],
      }),
    },
    async (request) => {
      await revokeGrant(db, platform.revokedGrants, request.auth, request.params.client_id, request.ip)
      return ok({ revoked: true as const })
    },
  )
}
