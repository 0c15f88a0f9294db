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
      description:
        "Keeps the account's connected Meta user token for `source` (`socialnet-leads` for lead ads), " +
        'sealed with SECRETS_ENCRYPTION_KEY and never returned or logged (503 when the key is unset). A ' +
        "new `socialnet-leads` token makes the account's token valid again and captures the leads that " +
        'waited for one.',
      tags: ['leads'],
      access: LEADS_WRITE,
      body: StoreTokenBody,
      response: { 201: Envelope(TokenRecord) },
      errors: [400, 401, 403, 503],
      answers: { 503: 'SECRETS_ENCRYPTION_KEY is not set: no token can be kept' },
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
      description:
        "The spec's disconnect: the stored token of `source` gets `deleted`; for `socialnet-leads` the " +
        "account's `socialnet_ads` campaigns are also marked `is_deleted` (`campaigns_deleted` counts " +
        'them). The account is told (a platform event and the app webhook `socialnet.disconnected`). 400 ' +
        '`Record Not found!` when no live token of the source is stored.',
      tags: ['leads'],
      access: LEADS_WRITE,
      querystring: DisconnectQuery,
      response: { 200: Envelope(Disconnected) },
      errors: [400, 401, 403],
      answers: { 400: 'Invalid request, or `Record Not found!` (no live token of the source)' },
    }),
    async (request) => ok(await disconnect(deps, request.auth.account_id, request.query.source)),
  )
}
