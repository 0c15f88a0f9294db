import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { ListEnvelope, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { WebhookEvent, WebhookEventsQuery } from './webhook-events.schemas.js'
import { listReceivedEvents } from './webhook-events.service.js'

/** The review events every source sent, for the operator (ADMIN_TOKEN): failed ones are never lost. */
export const reviewsAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/reviews/webhook-events',
    routeOptions({
      operationId: 'reviewWebhookEventsList',
      summary: 'Review events received, newest first, by status (failed: a missing account_id) and source',
      description:
        'For the operator (ADMIN_TOKEN): every review event received from every source, newest first, so ' +
        'that a failed one (a missing `account_id`, an unknown account) is never lost. Filters: `status` ' +
        'and `source`.',
      tags: ['admin'],
      access: 'admin',
      querystring: WebhookEventsQuery,
      response: { 200: ListEnvelope(WebhookEvent) },
      errors: [400, 401],
    }),
    async (request) => {
      const { data, pagination } = await listReceivedEvents(platform.db, request.query)
      return okPage(data, pagination)
    },
  )
}
