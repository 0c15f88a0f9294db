import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Streamed } from '../../platform/http/schemas.js'
import { ExportQuery, RoomExport } from './export.schemas.js'
import { exportRoom } from './export.service.js'
import { RoomParams } from './messages.schemas.js'
import { addRoomRouteHooks, callerOf, ROOM_ERRORS } from './room-access.hooks.js'

/** `GET /api/conversation-v2/room/:roomId/export` (#13): the room's messages for its members. */
export const roomExportRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  addRoomRouteHooks(app, platform)

  app.get(
    '/:roomId/export',
    routeOptions({
      operationId: 'roomExport',
      summary: "Export the room's messages (not deleted), oldest first: JSON, CSV or plain text",
      description:
        "The room's messages, not deleted, oldest first, for its members: `format` json (the spec's `{ " +
        'success, data: { room, messages: [ { sender, content, timestamp } ], export_date, total_messages ' +
        '} }`, the default), csv or txt (as downloads). All three are streamed.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      querystring: ExportQuery,
      response: {
        200: {
          description: 'JSON by default; CSV and plain text as downloads (content-disposition)',
          content: {
            'application/json': { schema: Streamed(RoomExport) },
            'text/csv': { schema: Streamed(Type.String()) },
            'text/plain': { schema: Streamed(Type.String()) },
          },
        },
      },
      errors: ROOM_ERRORS,
      config: heavy(),
    }),
    async (request, reply) => {
      const file = await exportRoom(
        platform.db,
        callerOf(request),
        request.params.roomId,
        request.query.format,
      )
      if (file.fileName) reply.header('content-disposition', contentDisposition(file.fileName))
      return reply.type(file.contentType).send(file.body)
    },
  )
}
