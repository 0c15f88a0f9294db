import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import {
  MessageBody,
  MessageDeleted,
  MessageList,
  MessageListQuery,
  MessageParams,
  MessageSent,
  ReadBody,
  ReadMarker,
  RoomParams,
} from './messages.schemas.js'
import {
  deleteMessage,
  editMessage,
  listRoomMessages,
  MESSAGE_DELETED,
  markRead,
  sendMessage,
} from './messages.service.js'
import { callerOf, roomRouteOptions } from './room-access.routes.js'
import type { RoomEventDeps } from './room-events.js'

/** Messages of a room and the caller's read marker, under `/api/conversation-v2/room/:roomId`. */
export const messagesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps: RoomEventDeps = { db, events: platform.events, sink: platform.realtime }
  const route = roomRouteOptions(app, platform)

  app.post(
    '/:roomId/messages',
    route('messageSend', 'Post a message to a room the caller is a member of', {
      params: RoomParams,
      body: MessageBody,
      response: { 201: MessageSent, ...errorResponses(400, 401, 404, 429) },
    }),
    async (request, reply) => {
      const message = await sendMessage(deps, callerOf(request), request.params.roomId, request.body.content)
      return reply.status(201).send({ success: true, message })
    },
  )

  app.get(
    '/:roomId/messages',
    route('messageList', "A page of the room's messages, newest first (before or after a message)", {
      params: RoomParams,
      querystring: MessageListQuery,
      response: { 200: MessageList, ...errorResponses(400, 401, 404, 429) },
    }),
    (request) => listRoomMessages(db, callerOf(request), request.params.roomId, request.query),
  )

  app.patch(
    '/:roomId/messages/:messageId',
    route('messageEdit', "Change the content of one of the caller's messages", {
      params: MessageParams,
      body: MessageBody,
      response: { 200: MessageSent, ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request) => {
      const { roomId, messageId } = request.params
      const message = await editMessage(deps, callerOf(request), roomId, messageId, request.body.content)
      return { success: true as const, message }
    },
  )

  app.delete(
    '/:roomId/messages/:messageId',
    route('messageDelete', "Delete one of the caller's messages", {
      params: MessageParams,
      response: { 200: MessageDeleted, ...errorResponses(400, 401, 403, 404, 429) },
    }),
    async (request) => {
      await deleteMessage(deps, callerOf(request), request.params.roomId, request.params.messageId)
      return { success: true as const, message: MESSAGE_DELETED }
    },
  )

  app.post(
    '/:roomId/read',
    route('messageMarkRead', "Move the caller's read marker forward to a message (never back)", {
      params: RoomParams,
      body: ReadBody,
      response: { 200: ReadMarker, ...errorResponses(400, 401, 404, 429) },
    }),
    (request) => markRead(db, callerOf(request), request.params.roomId, request.body.message_id),
  )
}
