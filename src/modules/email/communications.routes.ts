import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { type TSchema, Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, IdParams, Integer, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { getCommunication, listCommunicationsPage, readAttachment } from './communications.service.js'
import { COMMUNICATION_TYPES } from './tables.js'

const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()])

const SentBy = Type.Object({
  name: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  phone: Type.String(),
  image: Type.String(),
})

const AttachmentMetadata = Type.Object({
  bucket: Type.String(),
  type: Type.String(),
  file_name: Type.String(),
  size: Type.Integer({ description: 'Bytes' }),
  key: Type.String({ description: 'Object storage key' }),
})

const DeliveryEvent = Type.Object({
  event: Type.String(),
  email: Type.String(),
  timestamp: Type.Integer({ description: 'Unix seconds' }),
  sg_event_id: Type.String(),
  sg_message_id: Nullable(Type.String()),
  account_id: Id(),
  uid: Nullable(Type.String()),
  useragent: Nullable(Type.String()),
  ip: Nullable(Type.String()),
  url: Nullable(Type.String()),
})

/** The spec's Communication record; `headers` and `body` are the provider's, so their shape is open. */
export const Communication = Type.Object({
  _id: Id(),
  sent_by: Type.Union([SentBy, Type.Null()]),
  origin: Type.String(),
  account_id: Id(),
  headers: Type.Record(Type.String(), Type.Unknown(), { description: 'Provider response headers' }),
  body: Type.Record(Type.String(), Type.Unknown(), {
    description: 'The provider request, attachments emptied',
  }),
  msgID: Nullable(Type.String()),
  type: StringEnum(COMMUNICATION_TYPES),
  module: Type.String({ description: 'Provider tag in upper case, e.g. SENDGRID' }),
  message_type: Type.String(),
  contact_id: Type.Array(Id()),
  conversation_id: Type.Array(Id()),
  attachments: Type.Array(AttachmentMetadata),
  success: Type.Boolean(),
  events: Type.Array(DeliveryEvent),
  delivery_status: Nullable(
    Type.String({
      description:
        'The newest delivery event by its timestamp (same second: the later step, final states last); null before any',
    }),
  ),
  from: Type.Optional(Type.String()),
  to: Type.Optional(Type.Array(Type.String())),
  subject: Type.Optional(Type.String()),
  html: Type.Optional(Type.String()),
  text: Type.Optional(Type.String()),
  referenceID: Type.Optional(Type.String()),
  createdAt: Timestamp(),
  modifiedAt: Timestamp(),
})

const ListQuery = Type.Composite([
  PageQuery(10, 100),
  Type.Object({
    contact_id: Type.Optional(Id({ description: 'Records sent to or received from this contact' })),
    conversation_id: Type.Optional(Id({ description: 'Records threaded into this conversation' })),
    type: Type.Optional(StringEnum(COMMUNICATION_TYPES)),
  }),
])

const AttachmentParams = Type.Object({
  id: Id(),
  index: Integer({ minimum: 0, description: "Position in the record's `attachments`, from 0" }),
})

/**
 * `attachment; filename="..."` with quotes and backslashes escaped and anything outside printable
 * ASCII replaced (a header cannot carry it), plus RFC 6266 `filename*` with the exact name when it differs.
 */
export function contentDisposition(fileName: string): string {
  const name = fileName || 'attachment'
  const plain = name.replace(/[^\x20-\x7e]/g, '_')
  const header = `attachment; filename="${plain.replace(/["\\]/g, '\\$&')}"`
  if (plain === name) return header
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  )
  return `${header}; filename*=UTF-8''${encoded}`
}

/** The caller's email records, under `/mailprovider/communications` of both integration prefixes. */
export const communicationsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, storage } = platform
  app.addHook('onRequest', app.authenticate)
  const tenant = (summary: string) => ({ tags: ['email'], summary, security: [{ bearer: [] }] })

  app.get(
    '/mailprovider/communications',
    {
      schema: {
        ...tenant('List sent and received emails, newest first, with their delivery events'),
        querystring: ListQuery,
        response: { 200: PageEnvelope(Communication) },
      },
    },
    async (request) => {
      const { contact_id, conversation_id, type, page, limit } = request.query
      const { data, pagination } = await listCommunicationsPage(db, request.auth.account_id, {
        contactId: contact_id,
        conversationId: conversation_id,
        type,
        page,
        limit,
      })
      return okPage(data, pagination)
    },
  )

  app.get(
    '/mailprovider/communications/:id',
    {
      schema: {
        ...tenant('Read one email record with its delivery events and attachment metadata'),
        params: IdParams,
        response: { 200: Envelope(Communication) },
      },
    },
    async (request) => ok(await getCommunication(db, request.auth.account_id, request.params.id)),
  )

  app.get(
    '/mailprovider/communications/:id/attachments/:index',
    {
      schema: {
        ...tenant("Download one of the record's attachments"),
        params: AttachmentParams,
        response: {
          200: {
            description: "The file bytes, with the attachment's type",
            content: {
              'application/octet-stream': {
                schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }),
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { id, index } = request.params
      const { metadata, bytes } = await readAttachment(db, storage, request.auth.account_id, id, index)
      // The type came from a sender; Fastify replaces anything that is not a valid media type
      // (a CR/LF included) with application/octet-stream, which the tests pin.
      return reply
        .type(metadata.type || 'application/octet-stream')
        .header('content-disposition', contentDisposition(metadata.file_name))
        .header('content-length', bytes.length)
        .send(bytes)
    },
  )
}
