import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions } from '../../platform/http/route-options.js'
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
import { addRoomRouteHooks, callerOf, ROOM_ERRORS } from './room-access.hooks.js'
import type { RoomEventDeps } from './room-events.js'

/** Messages of a room and the caller's read marker, under `/api/conversation-v2/room/:roomId`. */
export const messagesRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const deps: RoomEventDeps = { db, events: platform.events, sink: platform.realtime }
  addRoomRouteHooks(app, platform)

  app.post(
    '/:roomId/messages',
    routeOptions({
      operationId: 'messageSend',
      summary: 'Post a message to a room the caller is a member of',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      body: MessageBody,
      response: { 201: MessageSent },
      errors: ROOM_ERRORS,
    }),
    async (request, reply) => {
      const message = await sendMessage(deps, callerOf(request), request.params.roomId, request.body.content)
      return reply.status(201).send({ success: true, message })
    },
  )

  app.get(
    '/:roomId/messages',
    routeOptions({
      operationId: 'messageList',
      summary: "A page of the room's messages, newest first (before or after a message)",
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      querystring: MessageListQuery,
      response: { 200: MessageList },
      errors: ROOM_ERRORS,
    }),
    (request) => listRoomMessages(db, callerOf(request), request.params.roomId, request.query),
  )

  app.patch(
    '/:roomId/messages/:messageId',
    routeOptions({
      operationId: 'messageEdit',
      summary: "Change the content of one of the caller's messages",
      tags: ['rooms'],
      access: 'bearer',
      params: MessageParams,
      body: MessageBody,
      response: { 200: MessageSent },
      errors: [...ROOM_ERRORS, 403],
    }),
    async (request) => {
      const { roomId, messageId } = request.params
      const message = await editMessage(deps, callerOf(request), roomId, messageId, request.body.content)
      return { success: true as const, message }
    },
  )

  app.delete(
    '/:roomId/messages/:messageId',
    routeOptions({
      operationId: 'messageDelete',
      summary: "Delete one of the caller's messages",
      tags: ['rooms'],
      access: 'bearer',
      params: MessageParams,
      response: { 200: MessageDeleted },
      errors: [...ROOM_ERRORS, 403],
    }),
    async (request) => {
      await deleteMessage(deps, callerOf(request), request.params.roomId, request.params.messageId)
      return { success: true as const, message: MESSAGE_DELETED }
    },
  )

  app.post(
    '/:roomId/read',
    routeOptions({
      operationId: 'messageMarkRead',
      summary: "Move the caller's read marker forward to a message (never back)",
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      body: ReadBody,
      response: { 200: ReadMarker },
      errors: ROOM_ERRORS,
    }),
    (request) => markRead(db, callerOf(request), request.params.roomId, request.body.message_id),
  )
}
