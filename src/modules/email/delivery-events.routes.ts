import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { Forbidden, Unavailable } from '../../platform/http/errors.js'
import { EventBatch, Received } from './delivery-events.schemas.js'
import { receiveEventBatch } from './delivery-events.service.js'
import { enqueueDeliveryEvents } from './jobs.js'
import {
  parseWebhookPublicKey,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  verifyEventWebhookSignature,
} from './webhook-signature.js'

/** SendGrid posts batches of up to a few MB; the service-wide 1 MB limit would refuse large ones. */
export const EVENT_BATCH_BODY_LIMIT = 8 * 1024 * 1024

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/** SendGrid's event webhook: no credentials; signed when `SENDGRID_WEBHOOK_PUBLIC_KEY` is set. */
export const deliveryEventsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  const publicKey = platform.config.mail.webhookPublicKey
    ? parseWebhookPublicKey(platform.config.mail.webhookPublicKey)
    : undefined

  // The signature covers the exact bytes sent, so this scope parses JSON itself from the raw body, after
  // checking it, whatever the content type; encapsulation keeps the parser to these routes.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, rawBody: Buffer) => {
    if (publicKey) {
      const signed = {
        signature: header(request, SIGNATURE_HEADER),
        timestamp: header(request, TIMESTAMP_HEADER),
        rawBody,
      }
      if (!verifyEventWebhookSignature(publicKey, signed)) throw new Forbidden('Invalid webhook signature')
    }
    try {
      // A byte-order mark before the JSON is ignored, as the service's own JSON parser ignores it.
      return JSON.parse(rawBody.toString('utf8').replace(/^\ufeff/, ''))
    } catch {
      return undefined // not JSON: answered 200 like any other post, and dropped
    }
  })

  app.post(
    '/mailprovider/webhook',
    {
      bodyLimit: EVENT_BATCH_BODY_LIMIT,
      attachValidation: true,
      schema: {
        operationId: 'deliveryEventsReceive',
        tags: ['email'],
        summary:
          'SendGrid delivery events: stored, then applied by a job; 200 to any post once stored (503: retry)',
        body: EventBatch,
        response: { 200: Received, ...errorResponses(403, 503) },
      },
    },
    async (request) => {
      try {
        const outcome = await receiveEventBatch(db, request.body, (tx, batchId) =>
          enqueueDeliveryEvents(queue, tx, batchId),
        )
        if (outcome === 'nothing to apply') {
          request.log.warn('delivery event post holds no JSON array of events; answered 200 and dropped')
        }
      } catch (error) {
        // Not a 500: SendGrid redelivers on 5xx, and 503 says plainly that the same batch should come back.
        request.log.error({ err: error }, 'delivery events could not be stored; SendGrid will redeliver')
        throw new Unavailable('Delivery events could not be stored; please retry')
      }
      return { success: true as const, message: 'SUCCESS' }
    },
  )
}
