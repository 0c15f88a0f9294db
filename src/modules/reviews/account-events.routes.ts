import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { AccountEvent, AccountEventBody } from './account-events.schemas.js'
import { reportAccountEvent } from './account-events.service.js'
import { queueWebhookEvent } from './jobs.js'
import { REVIEWS_WRITE } from './review-access.service.js'

/** `POST /reviews/events`: the triggers no provider webhook reports, from the account's own systems. */
export const accountEventsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/events',
    routeOptions({
      operationId: 'reviewEventsReport',
      summary:
        'Report a service delivered, an appointment finished, a custom event or an order: review requests ' +
        'are scheduled when it is the configuration trigger (202; a repeated event_id answers 200)',
      tags: ['reviews'],
      access: REVIEWS_WRITE,
      body: AccountEventBody,
      response: { 200: Envelope(AccountEvent), 202: Envelope(AccountEvent) },
      errors: [400, 401, 403, 503],
    }),
    async (request, reply) => {
      const { event, repeated } = await reportAccountEvent(
        { db, log: request.log },
        request.auth.account_id,
        request.body,
        (id) => queueWebhookEvent(queue, id),
      )
      return reply.status(repeated ? 200 : 202).send(ok(event))
    },
  )
}
