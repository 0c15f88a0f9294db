import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Acknowledged } from '../../platform/http/envelope.js'
import { routeOptions, signatureHeaders } from '../../platform/http/route-options.js'
import { queueWebhookEvent } from './jobs.js'
import { CHARGE_EXAMPLE, StripePostBody } from './payment-webhook.schemas.js'
import { readStripePost, stripeWebhookPost } from './payment-webhook.service.js'
import { receiveWebhookPost } from './webhook-events.service.js'

const SIGNATURE_HEADER = 'stripe-signature'

/** `POST /reviews/webhook/paymentprovider/charge`: Stripe's webhook, stored, then applied by a job. */
export const paymentWebhookRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  const secret = platform.config.reviews.stripeWebhookSecret

  // The signature covers the exact bytes sent: this scope reads the raw body, whatever the content type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, rawBody: Buffer) => {
    const signature = request.headers[SIGNATURE_HEADER]
    return readStripePost(secret, typeof signature === 'string' ? signature : undefined, rawBody)
  })

  app.post(
    '/webhook/paymentprovider/charge',
    {
      // The parser read the body; a signed body the schema would refuse is still judged by the service.
      attachValidation: true,
      ...routeOptions({
        operationId: 'reviewPaymentWebhook',
        summary: 'Stripe payments: a succeeded charge schedules review requests, a refund cancels them',
        description:
          "Stripe's webhook (a Stripe event, or the spec's bare charge object), no credentials but its " +
          'signature (400 `Invalid signature` without a valid one). The event is stored, answered `{ ' +
          "success: true, message: 'SUCCESS' }`, then applied by a job: a succeeded charge schedules " +
          'review requests for the account in `metadata.account_id` after `delay_hours`; a refund cancels ' +
          'them. Skipped with 200: no or a disabled configuration, unmet conditions, no contact data, a ' +
          'repeated event.',
        tags: ['reviews'],
        access: 'public',
        requiresHttps: true,
        headers: signatureHeaders({
          [SIGNATURE_HEADER]:
            '`t=<Unix seconds>,v1=<hex HMAC-SHA256 of "t.body" with STRIPE_WEBHOOK_SECRET>`, at most 5 ' +
            'minutes old; 400 `Invalid signature` without a valid one',
        }),
        body: StripePostBody,
        response: { 200: Acknowledged },
        example: { body: CHARGE_EXAMPLE, response: { success: true, message: 'SUCCESS' } },
        errors: [400, 503],
        answers: {
          200: 'Stored (or skipped): `{ success: true, message: "SUCCESS" }`',
          400: '`Invalid signature`, or a body that is no Stripe event nor charge',
        },
      }),
    },
    async (request) => {
      await receiveWebhookPost(
        { db, log: request.log },
        'paymentprovider',
        stripeWebhookPost(request.body),
        (id, accountId) => queueWebhookEvent(queue, id, accountId),
      )
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
