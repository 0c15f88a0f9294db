import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { DomainError } from '../../platform/http/errors.js'
import { receiveInboundEmail } from './inbound.service.js'
import { INBOUND_BODY_LIMIT, readInboundForm, readInboundJson } from './inbound-parse.service.js'

const Received = Type.Object({ success: Type.Literal(true), message: Type.Literal('SUCCESS') })

/** SendGrid's Inbound Parse webhook: no credentials; replies are kept only for mail we sent. */
export const inboundRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  await app.register(multipart, {
    // `latin1` keeps every byte of a field, to be decoded with the charset `charsets` names for it.
    defCharset: 'latin1',
    limits: { fieldSize: INBOUND_BODY_LIMIT, fileSize: INBOUND_BODY_LIMIT, files: 100, fields: 100 },
  })

  app.post(
    '/mailprovider/webhook/inbound',
    {
      // Multipart bodies are streamed past Fastify's body limit; the reader counts them against it.
      bodyLimit: INBOUND_BODY_LIMIT,
      preValidation: async (request) => {
        const length = Number(request.headers['content-length'])
        if (length > INBOUND_BODY_LIMIT + 1024 * 1024) {
          throw new DomainError(413, 'The inbound email must be at most 30 MB')
        }
      },
      schema: {
        tags: ['email'],
        summary:
          'Receive a reply through SendGrid Inbound Parse (multipart: the parsed form, or the raw MIME message in `email`; or the same fields as JSON)',
        consumes: ['multipart/form-data', 'application/json'],
        response: { 200: Received },
      },
    },
    async (request) => {
      const email = request.isMultipart()
        ? await readInboundForm(request)
        : await readInboundJson(request.body)
      const outcome = await receiveInboundEmail({ ...platform, log: request.log }, email)
      request.log.info({ inbound: outcome }, 'inbound email received')
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}
