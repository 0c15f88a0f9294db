import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions, signatureHeaders } from '../../platform/http/route-options.js'
import { EventBatch, Received } from './delivery-events.schemas.js'
import { readEventPost, receiveEventBatch } from './delivery-events.service.js'
import { enqueueDeliveryEvents } from './jobs.js'
import { parseWebhookPublicKey, SIGNATURE_HEADER, TIMESTAMP_HEADER } from './webhook-signature.js'

/** SendGrid posts batches of up to a few MB; the service-wide 1 MB limit would refuse large ones. */
export const EVENT_BATCH_BODY_LIMIT = 8 * 1024 * 1024

const header = (request: FastifyRequest, name: string) => {
  const value = request.headers[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * SendGrid's event webhook: no credentials; signed when `SENDGRID_WEBHOOK_PUBLIC_KEY` is set, which
 * production requires unless SENDGRID_WEBHOOK_UNSIGNED_UNSAFE says otherwise.
 */
export const deliveryEventsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  const { mail } = platform.config
  const publicKey = mail.webhookPublicKey ? parseWebhookPublicKey(mail.webhookPublicKey) : undefined
  if (!publicKey && mail.acceptUnsignedEvents)
    platform.log.warn(
      'SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true: delivery events are accepted unsigned, from anyone who posts them',
    )

  // The signature covers the exact bytes sent, so this scope reads the raw body itself, whatever the
  // content type; encapsulation keeps the parser to these routes.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, rawBody: Buffer) =>
    readEventPost(publicKey, {
      signature: header(request, SIGNATURE_HEADER),
      timestamp: header(request, TIMESTAMP_HEADER),
      rawBody,
    }),
  )

  app.post(
    '/mailprovider/webhook',
    {
      bodyLimit: EVENT_BATCH_BODY_LIMIT,
      attachValidation: true,
      ...routeOptions({
        operationId: 'deliveryEventsReceive',
        summary:
          'SendGrid delivery events: stored, then applied by a job; 200 to any post once stored (503: retry)',
        description:
          "The provider's event webhook: a JSON array of delivery events (delivered, open, click, bounce, " +
          'dropped, spam report, unsubscribe, ...), each carrying the `account_id` and `uid` the send gave it. ' +
          'Stored first and applied to their Communication records by a background job, so that it answers ' +
          "within the provider's 5 seconds; a batch received twice is applied once. Signed by the provider " +
          '(headers below); create the webhook with `POST .../mailprovider/webhook/create`.',
        answers: {
          200: 'Stored (also when an event names nothing this service sent)',
          403: 'The signature is missing, wrong or too old',
          503: 'Not stored: the provider retries',
        },
        tags: ['email'],
        access: 'public',
        requiresHttps: true,
        headers: signatureHeaders({
          [SIGNATURE_HEADER]:
            'The base64 DER ECDSA P-256 / SHA-256 signature of the timestamp header followed by the body, ' +
            'checked with SENDGRID_WEBHOOK_PUBLIC_KEY when it is set (production requires it); 403 without ' +
            'a valid one',
          [TIMESTAMP_HEADER]:
            'The Unix seconds SendGrid signed with the body; 403 when more than 300 s from now either way',
        }),
        body: EventBatch,
        response: { 200: Received },
        errors: [403],
      }),
    },
    async (request) => {
      await receiveEventBatch({ db, log: request.log }, request.body, (tx, batchId) =>
        enqueueDeliveryEvents(queue, tx, batchId, request.body),
      )
      return { success: true as const, message: 'SUCCESS' }
    },
  )
}
