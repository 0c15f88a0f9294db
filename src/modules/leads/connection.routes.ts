import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Disconnected, DisconnectQuery, StoreTokenBody, TokenRecord } from './connection.schemas.js'
import { disconnect, storeToken } from './connection.service.js'
import { leadsDepsOf } from './deps.js'
import { queueLeadCapture } from './jobs.js'
import { LEADS_WRITE } from './lead-access.service.js'
import { queueLeadsWaitingForToken } from './lead-capture.service.js'

/** The account's connection to Meta: its stored user token (`socialnet-leads`), and disconnecting it. */
export const connectionRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const deps = leadsDepsOf(platform)
  const enqueueCapture = queueLeadCapture(platform.queue)
  const storeDeps = {
    ...deps,
    queueLeadsWaitingForToken: (tx: Database, accountId: string) =>
      queueLeadsWaitingForToken(tx, accountId, enqueueCapture),
  }
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/socialnet/auth/token',
    routeOptions({
      operationId: 'socialnetTokenStore',
      summary:
        "Store the account's connected Meta user token (sealed, never returned); leads waiting for a token are captured",
      tags: ['leads'],
      access: LEADS_WRITE,
      body: StoreTokenBody,
      response: { 201: Envelope(TokenRecord) },
      errors: [400, 401, 403, 503],
    }),
    async (request, reply) => {
      const record = await storeToken(storeDeps, request.auth, request.body)
      return reply.status(201).send(ok(record))
    },
  )

  app.delete(
    '/socialnet/auth/delete',
    routeOptions({
      operationId: 'socialnetDisconnect',
      summary:
        "Disconnect: the token gets `deleted`; for socialnet-leads the account's campaigns are marked is_deleted",
      tags: ['leads'],
      access: LEADS_WRITE,
      querystring: DisconnectQuery,
      response: { 200: Envelope(Disconnected) },
      errors: [400, 401, 403],
    }),
    async (request) => ok(await disconnect(deps, request.auth.account_id, request.query.source)),
  )
}
