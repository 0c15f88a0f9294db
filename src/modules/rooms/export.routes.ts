import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { ExportQuery, RoomExport } from './export.schemas.js'
import { exportRoom } from './export.service.js'
import { RoomParams } from './messages.schemas.js'
import { callerOf, roomRouteOptions } from './room-access.routes.js'

/** `GET /api/conversation-v2/room/:roomId/export` (#13): the room's messages for its members. */
export const roomExportRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const route = roomRouteOptions(app, platform)

  app.get(
    '/:roomId/export',
    route('roomExport', "Export the room's messages (not deleted), oldest first: JSON, CSV or plain text", {
      params: RoomParams,
      querystring: ExportQuery,
      response: {
        200: {
          description: 'JSON by default; CSV and plain text as downloads (content-disposition)',
          content: {
            'application/json': { schema: RoomExport },
            'text/csv': { schema: Type.String() },
            'text/plain': { schema: Type.String() },
          },
        },
        ...errorResponses(400, 401, 404, 429),
      },
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
