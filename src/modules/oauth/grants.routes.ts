import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { Id, Timestamp } from '../../platform/http/schemas.js'
import { listGrants, revokeGrant } from './consents.service.js'

const Grant = Type.Object({
  client_id: Id(),
  app_name: Type.String(),
  scopes: Type.Array(Type.String()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

/** `/grants`: the apps a user allowed in their account, and taking an app's access back (platform JWT). */
export const grantsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)
  const tenant = (summary: string) => ({ tags: ['oauth'], summary, security: [{ bearer: [] }] })

  app.get(
    '/grants',
    {
      schema: {
        ...tenant('The apps you allowed in this account'),
        response: { 200: Envelope(Type.Array(Grant)) },
      },
    },
    async (request) => ok(await listGrants(db, request.auth)),
  )

  app.delete(
    '/grants/:client_id',
    {
      schema: {
        ...tenant("Take an app's access back: its consent and refresh tokens go"),
        params: Type.Object({ client_id: Id() }),
        response: { 200: Envelope(Type.Object({ revoked: Type.Literal(true) })) },
      },
    },
    async (request) => {
      await revokeGrant(db, platform.revokedGrants, request.auth, request.params.client_id, request.ip)
      return ok({ revoked: true as const })
    },
  )
}
