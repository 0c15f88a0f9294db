import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { AttachmentParams, Communication, ListQuery } from './communications.schemas.js'
import { getCommunication, listCommunicationsPage, readAttachment } from './communications.service.js'

/** The caller's email records, under `/mailprovider/communications` of both integration prefixes. */
export const communicationsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, storage } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/mailprovider/communications',
    routeOptions({
      operationId: 'communicationList',
      summary: 'List sent and received emails, newest first, with their delivery events',
      description:
        "The account's email records, sent (OUTGOING) and received (INCOMING), newest first, each with its " +
        'delivery events. Read by `page` and `limit`, or by `cursor`. A user of the account.',
      tags: ['email'],
      access: 'bearer',
      querystring: ListQuery,
      response: { 200: ListEnvelope(Communication) },
      errors: [],
    }),
    async (request) => {
      const { contact_id, conversation_id, type, ...window } = request.query
      const { data, pagination } = await listCommunicationsPage(db, request.auth.account_id, {
        contactId: contact_id,
        conversationId: conversation_id,
        type,
        ...window,
      })
      return okPage(data, pagination)
    },
  )

  app.get(
    '/mailprovider/communications/:id',
    routeOptions({
      operationId: 'communicationRead',
      summary: 'Read one email record with its delivery events and attachment metadata',
      description:
        'One email record of the account with its delivery events and the metadata of its attachments (not ' +
        'their bytes). A user of the account.',
      answers: { 404: 'No email record with this id in the account' },
      tags: ['email'],
      access: 'bearer',
      params: IdParams,
      response: { 200: Envelope(Communication) },
      errors: [404],
    }),
    async (request) => ok(await getCommunication(db, request.auth.account_id, request.params.id)),
  )

  app.get(
    '/mailprovider/communications/:id/attachments/:index',
    routeOptions({
      operationId: 'communicationAttachmentDownload',
      summary: "Download one of the record's attachments",
      description:
        "The bytes of the record's attachment at `index` (from 0, in the order of its `attachments`), with " +
        'its content type and file name. A user of the account.',
      answers: {
        200: "The attachment's bytes",
        404: 'No such record in the account, or no attachment at this index',
      },
      tags: ['email'],
      access: 'bearer',
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
      errors: [404],
    }),
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
