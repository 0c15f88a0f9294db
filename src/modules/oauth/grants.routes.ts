import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { Grant, GrantParams, RevokedGrant } from './grants.schemas.js'
import { listGrants, revokeGrant } from './grants.service.js'

/** `/grants`: the apps a user allowed in their account, and taking an app's access back (platform JWT). */
export const grantsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)
  const tenant = (operationId: string, summary: string) => ({
    operationId,
    tags: ['oauth'],
    summary,
    security: [{ bearer: [] }],
  })

  app.get(
    '/grants',
    {
      schema: {
        ...tenant('grantsList', 'The apps you allowed in this account'),
        // 403: an app's access token, which may not manage grants.
        response: { 200: Envelope(Type.Array(Grant)), ...errorResponses(401, 403) },
      },
    },
    async (request) => ok(await listGrants(db, request.auth)),
  )

  app.delete(
    '/grants/:client_id',
    {
      schema: {
        ...tenant('grantsRevoke', "Take an app's access back: its consent and refresh tokens go"),
        params: GrantParams,
        response: { 200: Envelope(RevokedGrant), ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      await revokeGrant(db, platform.revokedGrants, request.auth, request.params.client_id, request.ip)
      return ok({ revoked: true as const })
    },
  )
}
