import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { DeliveriesQuery, DeliveryParams, WebhookDelivery } from './webhook-deliveries.schemas.js'
import { listWebhookDeliveries, replayWebhookDelivery } from './webhook-deliveries.service.js'

/** An app's webhook deliveries, beside its other admin routes (ADMIN_TOKEN): what was sent, and replays. */
export const webhookDeliveriesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/oauth/apps/:id/webhook-deliveries',
    routeOptions({
      operationId: 'webhookDeliveriesList',
      summary: "List an app's webhook deliveries, newest first, with every attempt; filter by status",
      description:
        "The app's webhook deliveries (signed account events posted to its webhook URL), newest first, each " +
        "with every attempt's status and answer; `status` filters them (pending, retrying, succeeded, dead, " +
        'dropped). Operator only.',
      answers: { 404: 'No app with this client id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      querystring: DeliveriesQuery,
      response: { 200: PageEnvelope(WebhookDelivery) },
      errors: [404],
    }),
    async (request) => {
      const { data, pagination } = await listWebhookDeliveries(db, request.params.id, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/oauth/apps/:id/webhook-deliveries/:delivery_id/replay',
    routeOptions({
      operationId: 'webhookDeliveriesReplay',
      summary:
        'Send a delivery again with the same webhook-id, as a new series of attempts; a delivery still waiting is left as it is',
      description:
        'Sends the delivery again, as a new attempt queued at once (202), whatever its status: for an app ' +
        'that missed events while its endpoint was down. Operator only.',
      answers: { 202: 'The delivery, queued again', 404: 'No such app, or no such delivery of it' },
      tags: ['admin'],
      access: 'admin',
      params: DeliveryParams,
      response: { 202: Envelope(WebhookDelivery) },
      errors: [404],
    }),
    async (request, reply) => {
      const { id, delivery_id: deliveryId } = request.params
      return reply.status(202).send(ok(await replayWebhookDelivery(db, id, deliveryId)))
    },
  )
}
