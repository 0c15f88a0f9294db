import { setImmediate as nextTurn } from 'node:timers/promises'
import multipart from '@fastify/multipart'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { Acknowledged } from '../../platform/http/envelope.js'
import { DomainError } from '../../platform/http/errors.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { type InboundDeps, receiveInboundEmail } from './inbound.service.js'
import {
  INBOUND_BODY_LIMIT,
  INBOUND_JSON_BODY_LIMIT,
  type InboundAttachment,
  parseInboundForm,
  readInboundJson,
} from './inbound-parse.service.js'
import { mailProviderTag } from './mail-provider.js'

/** SendGrid's Inbound Parse webhook: no credentials; replies are kept only for mail we sent. */
export const inboundRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const deps: Omit<InboundDeps, 'log'> = {
    db: platform.db,
    providerTag: mailProviderTag(platform.config.mail.provider),
    storage: platform.storage,
    events: platform.events,
    changes: platform.changes,
  }
  await app.register(multipart, {
    // Every part is read as a stream of bytes, fields too: a field's bytes are decoded with the charset
    // `charsets` names for it, and a text of up to 30 MB is never built as one string in one go.
    isPartAFile: () => true,
    limits: { fileSize: INBOUND_BODY_LIMIT, files: 200 },
  })

  app.post(
    '/mailprovider/webhook/inbound',
    {
      // Fastify's body limit binds JSON only (a relay's: SendGrid posts multipart). Multipart bodies are
      // streamed past it, and the reader counts them against SendGrid's 30 MB.
      bodyLimit: INBOUND_JSON_BODY_LIMIT,
      preValidation: async (request) => {
        const length = Number(request.headers['content-length'])
        if (length > INBOUND_BODY_LIMIT + 1024 * 1024) throw new PayloadTooLarge()
      },
      ...routeOptions({
        operationId: 'inboundReceive',
        summary:
          'Receive a reply through SendGrid Inbound Parse (multipart: the parsed form, or the raw MIME message in `email`; or the same fields as JSON)',
        description:
          'Unsigned: SendGrid signs no Inbound Parse post. A reply is kept only when it answers mail this ' +
          'service sent.',
        tags: ['email'],
        access: 'public',
        requiresHttps: true,
        consumes: ['multipart/form-data', 'application/json'],
        response: { 200: Acknowledged },
        errors: [413],
      }),
    },
    async (request) => {
      const email = request.isMultipart()
        ? await readMultipart(request).then(({ fields, files }) => parseInboundForm(fields, files))
        : await readInboundJson(request.body)
      const outcome = await receiveInboundEmail({ ...deps, log: request.log }, email)
      request.log.info({ inbound: outcome }, 'inbound email received')
      return { success: true as const, message: 'SUCCESS' as const }
    },
  )
}

class PayloadTooLarge extends DomainError {
  constructor() {
    super(413, `The inbound email must be at most ${INBOUND_BODY_LIMIT / 1024 / 1024} MB`)
  }
}

/**
 * Reads the multipart body, counting it against the limit. Every part comes as a stream (see `isPartAFile`
 * above); those busboy would have read as files (a file name, or `application/octet-stream`) are files.
 */
async function readMultipart(request: FastifyRequest) {
  const fields = new Map<string, Buffer>()
  const files = new Map<string, InboundAttachment>()
  let total = 0
  const count = (bytes: number) => {
    total += bytes
    if (total > INBOUND_BODY_LIMIT) throw new PayloadTooLarge()
  }
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') continue // none: every part is a file
      const data = await partBytes(part.file, count)
      if (part.filename !== undefined || part.mimetype === 'application/octet-stream') {
        files.set(part.fieldname, { filename: part.filename, type: part.mimetype, data })
      } else {
        fields.set(part.fieldname, data)
      }
    }
  } catch (error) {
    if ((error as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw new PayloadTooLarge()
    throw error
  }
  return { fields, files }
}

/** Copying this many bytes of a part takes a turn of the event loop, so other requests get theirs. */
const COPY_BYTES_PER_TURN = 1024 * 1024

/** A part's bytes, as its chunks came, joined a megabyte per turn of the event loop. */
async function partBytes(stream: AsyncIterable<Buffer>, count: (bytes: number) => void): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of stream) {
    count(chunk.length)
    chunks.push(chunk)
    size += chunk.length
  }
  const bytes = Buffer.allocUnsafe(size)
  let at = 0
  let sinceTurn = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.length
    sinceTurn += chunk.length
    if (sinceTurn >= COPY_BYTES_PER_TURN) {
      sinceTurn = 0
      await nextTurn()
    }
  }
  return bytes
}
