import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { routeOptions, signatureHeaders } from '../../platform/http/route-options.js'
import { REVIEWS_READ } from './review-access.service.js'
import { InboundSmsBody, ListQuery, SmsOptOut } from './sms-opt-outs.schemas.js'
import {
  EMPTY_TWIML,
  listAccountSmsOptOuts,
  receiveInboundSms,
  verifyTwilioRequest,
} from './sms-opt-outs.service.js'
import { TWILIO_SIGNATURE_HEADER, type TwilioParams } from './twilio.js'

/**
 * `POST /reviews/webhook/sms/inbound`, Twilio's webhook for the customers' replies (STOP opts a number out,
 * START back in), and `GET /reviews/sms-opt-outs`, the account's opted-out numbers.
 */
export const smsOptOutsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const settings = {
    authToken: platform.config.reviews.sms.authToken,
    publicBaseUrl: platform.config.publicBaseUrl,
  }

  // Twilio posts its webhooks form-encoded, and signs the parameters as its form parser reads them.
  app.removeAllContentTypeParsers()
  await app.register(formbody)

  app.post(
    '/webhook/sms/inbound',
    {
      // Before the body's schema: a request Twilio did not sign is refused (403), whatever it holds.
      preValidation: async (request) => {
        const signature = request.headers[TWILIO_SIGNATURE_HEADER]
        verifyTwilioRequest(settings, {
          pathAndQuery: request.url,
          signature: typeof signature === 'string' ? signature : undefined,
          params: (request.body ?? {}) as TwilioParams,
        })
      },
      ...routeOptions({
        operationId: 'reviewSmsInboundWebhook',
        summary: "Twilio's webhook for replies to review SMS: STOP opts the number out, START back in",
        description:
          "Twilio's webhook for customers' replies to review SMS, form-encoded and signed (403 `Invalid " +
          "X-Twilio-Signature` otherwise): STOP (and its synonyms) opts the number out of the account's " +
          'review SMS, START back in. Answered with empty TwiML, so no reply is sent.',
        tags: ['reviews'],
        access: 'public',
        requiresHttps: true,
        consumes: ['application/x-www-form-urlencoded'],
        headers: signatureHeaders({
          [TWILIO_SIGNATURE_HEADER]:
            'The base64 HMAC-SHA1 with TWILIO_AUTH_TOKEN of the URL called followed by the form parameters ' +
            'sorted by name; 403 without a valid one',
        }),
        body: InboundSmsBody,
        response: {
          200: {
            description: 'Empty TwiML: no reply is sent',
            content: { 'text/xml': { schema: Type.String() } },
          },
        },
        errors: [400, 403, 415],
        answers: { 403: '`Invalid X-Twilio-Signature`' },
      }),
    },
    async (request, reply) => {
      await receiveInboundSms({ db, log: request.log }, request.body)
      return reply.type('text/xml').send(EMPTY_TWIML)
    },
  )

  app.get(
    '/sms-opt-outs',
    {
      onRequest: app.authenticate,
      ...routeOptions({
        operationId: 'reviewSmsOptOutsList',
        summary: "The numbers that replied STOP to the account's review SMS, newest first",
        description:
          "The numbers that replied STOP to the account's review SMS, newest first, paged: no review SMS " +
          'goes to them until they reply START.',
        tags: ['reviews'],
        access: REVIEWS_READ,
        querystring: ListQuery,
        response: { 200: PageEnvelope(SmsOptOut) },
        errors: [400, 401, 403],
      }),
    },
    async (request) => {
      const { data, pagination } = await listAccountSmsOptOuts(db, request.auth.account_id, request.query)
      return okPage(data, pagination)
    },
  )
}
