import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Acknowledged } from '../../platform/http/envelope.js'
import { routeOptions, signatureHeaders } from '../../platform/http/route-options.js'
import { queueWebhookEvent } from './jobs.js'
import { SquarePostBody } from './order-webhook.schemas.js'
import { readSquarePost, receiveSquarePost, signatureOf } from './order-webhook.service.js'

/** `POST /reviews/webhook/orderprovider/order`: Square's order events, stored, then applied by a job. */
export const orderWebhookRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  const square = platform.config.reviews.square

  // The signature covers the exact bytes sent: this scope reads the raw body, whatever the content type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, rawBody: Buffer) =>
    readSquarePost(square, signatureOf(request.headers), rawBody),
  )

  app.post(
    '/webhook/orderprovider/order',
    {
      // The parser read the body; a signed body the schema would refuse is still judged by the service.
      attachValidation: true,
      ...routeOptions({
        operationId: 'reviewOrderWebhook',
        summary: 'Square orders: a COMPLETED order of a claimed location schedules review requests',
        description:
          "Square's order webhook, no credentials but its signature (400 `Invalid signature` without a " +
          "valid one). The event is stored, answered `{ success: true, message: 'SUCCESS' }`, then " +
          'applied by a job: a COMPLETED order of a location an account claims schedules review requests ' +
          'for its customer, once per order whatever events Square repeats. A repeated `event_id` is ' +
          'treated as already processed; an unclaimed location, a missing configuration or contact are ' +
          'skipped with 200.',
        tags: ['reviews'],
        access: 'public',
        requiresHttps: true,
        headers: signatureHeaders({
          'x-square-hmacsha256-signature':
            'The base64 HMAC-SHA256 with SQUARE_WEBHOOK_SIGNATURE_KEY of SQUARE_WEBHOOK_URL followed by the ' +
            'body; 400 `Invalid signature` without a valid one',
          'x-orderprovider-signature':
            "The same signature under the name the spec gives it, when Square's is absent",
        }),
        body: SquarePostBody,
        response: { 200: Acknowledged },
        errors: [400, 503],
        answers: {
          200: 'Stored (or skipped): `{ success: true, message: "SUCCESS" }`',
          400: '`Invalid signature`, or a body that is no Square event',
        },
      }),
    },
    async (request) => {
      await receiveSquarePost({ db, log: request.log }, request.body, (id, accountId) =>
        queueWebhookEvent(queue, id, accountId),
      )
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
