import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions } from '../../platform/http/route-options.js'
import {
  MESSAGE_EXAMPLE,
  MESSAGE_INPUT_EXAMPLE,
  MessageBody,
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
import { Done } from './rooms.schemas.js'

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
      description:
        'Posts a message (1 to 10,000 characters, not only white space) to a room the caller is a member ' +
        'of, and answers it with 201 once stored. Members receive `message:new` through the socket ' +
        "gateway; a snoozed member's comes with `notify: false`. 400 `Cannot access this room` for a " +
        'non-member, 404 `Room does not exist`.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      body: MessageBody,
      response: { 201: MessageSent },
      example: { body: MESSAGE_INPUT_EXAMPLE, response: { success: true, message: MESSAGE_EXAMPLE } },
      errors: ROOM_ERRORS,
      answers: {
        201: 'The message stored; members receive `message:new`',
        400: 'Invalid request, or `Cannot access this room` (not a member)',
        404: '`Room does not exist`',
      },
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
      description:
        "A page of the room's messages, newest first, deleted ones left out: before the message `before`, " +
        'or right after the message `after` (so a client catching up misses none); `limit` default 50, at ' +
        'most 100, and `has_more` tells whether more lie beyond. Members only.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      querystring: MessageListQuery,
      response: { 200: MessageList },
      example: { response: { messages: [MESSAGE_EXAMPLE], has_more: false } },
      errors: ROOM_ERRORS,
    }),
    (request) => listRoomMessages(db, callerOf(request), request.params.roomId, request.query),
  )

  app.patch(
    '/:roomId/messages/:messageId',
    routeOptions({
      operationId: 'messageEdit',
      summary: "Change the content of one of the caller's messages",
      description:
        "Changes the content of one of the caller's own messages (`edited_at` is set); the members " +
        "receive `message:updated`. 403 `Only the sender can change a message` for anyone else's; 404 " +
        '`Message not found` for an unknown or deleted one.',
      tags: ['rooms'],
      access: 'bearer',
      params: MessageParams,
      body: MessageBody,
      response: { 200: MessageSent },
      errors: [...ROOM_ERRORS, 403],
      answers: {
        403: '`Only the sender can change a message`',
        404: '`Room does not exist` or `Message not found`',
      },
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
      description:
        "Deletes one of the caller's own messages: it leaves the room's pages and exports, and the " +
        "members receive `message:deleted`. 403 `Only the sender can change a message` for anyone else's; " +
        "404 `Message not found`. Answers `{ success: true, message: 'Message deleted successfully' }`.",
      tags: ['rooms'],
      access: 'bearer',
      params: MessageParams,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
      answers: {
        403: '`Only the sender can change a message`',
        404: '`Room does not exist` or `Message not found`',
      },
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
      description:
        "Moves the caller's read marker (`last_message_read`) forward to `message_id`, never back, and " +
        "answers it with the caller's `unread_count` in the room. 400 when the message is not one of this " +
        'room.',
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
