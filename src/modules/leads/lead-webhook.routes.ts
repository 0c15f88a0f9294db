import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import type { JsonFields } from '../../platform/http/json-fields.js'
import { routeOptions, signatureHeaders } from '../../platform/http/route-options.js'
import { queueLeadEvent } from './jobs.js'
import { leadEventWriter } from './lead-webhook.repository.js'
import {
  EVENT_RECEIVED,
  LEAD_EVENT_EXAMPLE,
  LeadEventBody,
  PlainText,
  VerificationQuery,
} from './lead-webhook.schemas.js'
import { readLeadPost, receiveLeadEvent, signaturesOf, verifySubscription } from './lead-webhook.service.js'

const TEXT = 'text/plain; charset=utf-8'

/** `/webhooks/socialnet/leads`: Meta's callback check, and its lead events, stored then filed by a job. */
export const leadWebhookRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, queue } = platform
  const { appSecret, verifyToken } = platform.config.leads
  const storeEvent = leadEventWriter(db)
  const read = (request: FastifyRequest, rawBody: Buffer) =>
    readLeadPost(appSecret, signaturesOf(request.headers), rawBody)

  // The signature covers the exact bytes sent: this scope reads the raw body, whatever the content type.
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', { parseAs: 'buffer' }, async (request: FastifyRequest, rawBody: Buffer) =>
    read(request, rawBody),
  )

  app.get(
    '/webhooks/socialnet/leads',
    routeOptions({
      operationId: 'leadWebhookVerify',
      summary: "Meta's check of the callback URL: hub.challenge echoed when hub.verify_token is ours",
      description:
        "Meta's check of the callback URL: answers 200 with `hub.challenge` as plain text when `hub.mode` " +
        'is `subscribe` and `hub.verify_token` equals SOCIALNET_VERIFY_TOKEN; else 403 `Verification token ' +
        'mismatch`.',
      tags: ['leads'],
      access: 'public',
      requiresHttps: true,
      querystring: VerificationQuery,
      response: { 200: PlainText('hub.challenge, as sent') },
      errors: [400, 403],
      answers: { 200: '`hub.challenge`, as sent', 403: '`Verification token mismatch`' },
    }),
    async (request, reply) => reply.type(TEXT).send(verifySubscription(verifyToken, request.query)),
  )

  app.post(
    '/webhooks/socialnet/leads',
    {
      // The parser read and verified the body; the schema documents it and refuses nothing.
      attachValidation: true,
      ...routeOptions({
        operationId: 'leadWebhookReceive',
        summary: 'Lead events: verified, stored, answered EVENT_RECEIVED; each leadgen change filed by a job',
        description:
          "Meta's lead events `{ object: 'page', entry: [ { id, time, changes: [ { field: 'leadgen', " +
          'value: { leadgen_id, page_id, form_id, created_time } } ] } ] }`, signed with the app secret ' +
          '(403 `Signature mismatch` when no signature is sent or one is wrong). The event is stored and ' +
          'answered 200 `EVENT_RECEIVED` at once; each leadgen change is then fetched from Graph with the ' +
          "page's token and filed by a job as the claiming campaign's lead and contact. 503 when the " +
          'event could not be stored (Meta retries).',
        tags: ['leads'],
        access: 'public',
        requiresHttps: true,
        headers: signatureHeaders({
          'x-hub-signature':
            '`sha1=<hex HMAC-SHA1 of the body with SOCIALNET_APP_SECRET>`, checked when sent; 403 when neither signature is sent or one is wrong',
          'x-hub-signature-256':
            '`sha256=<hex HMAC-SHA256 of the body with the same secret>` (what Meta sends today), checked when sent',
        }),
        body: LeadEventBody,
        response: { 200: PlainText(EVENT_RECEIVED) },
        example: { body: LEAD_EVENT_EXAMPLE, response: EVENT_RECEIVED },
        errors: [400, 403, 503],
        answers: {
          200: '`EVENT_RECEIVED`: stored, processed by a job',
          403: '`Signature mismatch`',
          503: 'The event could not be stored: Meta retries',
        },
      }),
    },
    async (request, reply) => {
      // No body at all reaches no parser: it is judged like any other (a signature over nothing).
      const payload = (request.body as unknown as JsonFields | undefined) ?? read(request, Buffer.alloc(0))
      await receiveLeadEvent({ storeEvent, log: request.log }, payload, (id) =>
        queueLeadEvent(queue, id, payload),
      )
      return reply.type(TEXT).send(EVENT_RECEIVED)
    },
  )
}
