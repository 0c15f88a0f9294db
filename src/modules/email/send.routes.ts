import multipart, { type MultipartFile } from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { Invalid } from '../../platform/http/errors.js'
import { byAccount } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { COMMUNICATION_EXAMPLE, Communication } from './communications.schemas.js'
import { OUTGOING_EMAIL_EXAMPLE, SendBody, SendHeaders, type UploadedAttachment } from './send.schemas.js'
import {
  assertSendingOpen,
  attachmentTooLarge,
  MAX_ATTACHMENT_BYTES,
  MAX_ATTACHMENTS,
  sendDepsOf,
  tooManyAttachments,
} from './send.service.js'
import { idempotencyKey, sendEmailOncePerKey } from './send-keys.service.js'

/** Form fields that carry objects or arrays, JSON-encoded, in a multipart request. */
const JSON_FIELDS = new Set([
  'sender',
  'recipients',
  'cc',
  'bcc',
  'reply_to',
  'content',
  'dynamic_template_data',
])

declare module 'fastify' {
  interface FastifyRequest {
    emailAttachments: UploadedAttachment[]
  }
}

async function readFile(part: MultipartFile, index: number): Promise<UploadedAttachment> {
  try {
    return { filename: part.filename, type: part.mimetype, data: await part.toBuffer() }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw attachmentTooLarge(index)
    throw error
  }
}

/** A multipart send: file parts named `attachments`, the other fields as form fields. */
async function readMultipartSend(request: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {}
  const files: UploadedAttachment[] = []
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'attachments')
          throw new Invalid(`${part.fieldname} is not a file field; use attachments`)
        files.push(await readFile(part, files.length))
      } else if (JSON_FIELDS.has(part.fieldname)) {
        try {
          body[part.fieldname] = JSON.parse(String(part.value))
        } catch {
          throw new Invalid(`${part.fieldname} must be JSON`)
        }
      } else {
        body[part.fieldname] = part.value
      }
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_FILES_LIMIT') throw tooManyAttachments()
    throw error
  }
  request.emailAttachments = files
  return body
}

/** `POST /mailprovider/mail`, under both integration prefixes. */
export const sendRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { config } = platform
  const deps = sendDepsOf(platform)
  await app.register(multipart, {
    // One more file than allowed, so that the 13th is refused with our message rather than dropped.
    limits: { fileSize: MAX_ATTACHMENT_BYTES, files: MAX_ATTACHMENTS + 1, fieldSize: 1_048_576 },
  })
  app.decorateRequest('emailAttachments', null as unknown as UploadedAttachment[])

  app.post(
    '/mailprovider/mail',
    {
      onRequest: app.authenticate,
      preValidation: async (request) => {
        assertSendingOpen(config.mail.sendMaintenance)
        request.emailAttachments = []
        if (request.isMultipart()) request.body = (await readMultipartSend(request)) as typeof request.body
      },
      preHandler: app.requireActiveAccount,
      bodyLimit: 30 * 1024 * 1024,
      ...routeOptions({
        operationId: 'sendEmail',
        summary: 'Send an email (JSON, or multipart with `attachments` file parts)',
        description:
          "Sends an email through the account's provider and records it as a Communication. In order: the " +
          'variables in `subject` and contents are replaced; a recipient on the do-not-disturb list refuses the ' +
          'send (400 `DND enabled for received email(s).`); one credit per recipient is checked (400 ' +
          '`Insufficient balance`); the recipients are matched to contacts, each gets a prospect conversation; ' +
          'then the credits are spent. JSON, or multipart with at most 12 `attachments` file parts of 2 MB ' +
          "each. With an `Idempotency-Key`, a retry gets the first send's record back (`Idempotent-Replayed: " +
          'true`) and is neither sent nor charged again. A user of an active account; ' +
          'RATE_LIMIT_EMAIL_SEND_PER_MINUTE per account.',
        answers: {
          200: 'The Communication record of the send',
          403: "The account is not active, or the provider's key is missing or misconfigured",
          409: 'A send with this Idempotency-Key is under way',
          413: 'The body or an attachment is larger than allowed',
          503: 'Sending is under maintenance (EMAIL_SEND_MAINTENANCE), or a dependency did not answer in time',
        },
        example: { body: OUTGOING_EMAIL_EXAMPLE, response: ok(COMMUNICATION_EXAMPLE) },
        tags: ['email'],
        access: 'bearer',
        headers: SendHeaders,
        body: SendBody,
        response: { 200: Envelope(Communication) },
        errors: [404, 409, 413],
        config: {
          rateLimit: {
            max: config.rateLimits.emailSendPerMinute,
            timeWindow: '1 minute',
            keyGenerator: byAccount,
          },
        },
      }),
    },
    async (request, reply) => {
      const input = { ...(request.body as SendBody), attachments: request.emailAttachments }
      const key = idempotencyKey(request.headers['idempotency-key'])
      const send = { ...deps, log: request.log }
      const { record, replayed } = await sendEmailOncePerKey(send, request.auth, input, key)
      if (replayed) reply.header('idempotent-replayed', 'true')
      return ok(record)
    },
  )
}
