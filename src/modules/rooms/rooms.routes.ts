import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { relayTyping, TYPING_EVENT } from './gateway.service.js'
import {
  AddMembersBody,
  LeaveResponse,
  OwnerBody,
  RemovalRefused as RemovalRefusedBody,
  RemoveQuery,
  RoleBody,
} from './membership.schemas.js'
import {
  addMembers,
  changeRole,
  leaveRoom,
  RemovalRefused,
  removeMember,
  transferOwnership,
} from './membership.service.js'
import { addRoomRouteHooks, callerOf, ROOM_ERRORS, ROOM_ROUTE_ERRORS } from './room-access.hooks.js'
import { FavoritesResponse, ListQuery, ListResponse, ROOM_LIST_EXAMPLE } from './room-list.schemas.js'
import { listFavorites, listRooms } from './room-list.service.js'
import {
  CREATE_EXAMPLE,
  CreateBody,
  Done,
  FavoriteResponse,
  RenameBody,
  RenameResponse,
  ROOM_EXAMPLE,
  Room,
  RoomIdQuery,
  RoomParams,
  RoomResponse,
  SnoozeBody,
  SnoozeResponse,
} from './rooms.schemas.js'
import {
  createRoom,
  deleteRoom,
  ROOM_DELETED,
  renameRoom,
  snoozeRoom,
  toggleFavorite,
} from './rooms.service.js'

/** The chat rooms of the spec under `/api/conversation-v2/room` (messages, read markers, search and export aside). */
export const roomsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  // Events reach connected clients through the built-in Socket.IO gateway once their write commits.
  const deps = { db, events: platform.events, sink: platform.realtime }
  platform.realtime.onClientEvent(TYPING_EVENT, relayTyping(db, platform.realtime))
  addRoomRouteHooks(app, platform)

  app.get(
    '/',
    routeOptions({
      operationId: 'roomsList',
      summary: "List the caller's rooms (most recent activity first)",
      description:
        'The rooms the caller is a member of, most recent activity first, each with its members ' +
        '{conversation_id, user {name, email, avatar}, role}, last message, `unread_count`, `is_favorite` ' +
        'and `snoozed_until`. Filters: `search` (room and member names), `status` (all, unread, favorites, ' +
        'snoozed) and `type`; pages of `limit` (default 20, at most 100). Every room route needs a ' +
        "platform JWT carrying the caller's chat identity (`conversation.id`; 401 without one) and shares " +
        'one per-user rate limit (RATE_LIMIT_ROOMS_PER_MINUTE, 600 a minute by default).',
      tags: ['rooms'],
      access: 'bearer',
      querystring: ListQuery,
      response: { 200: ListResponse },
      example: { response: ROOM_LIST_EXAMPLE },
      errors: [...ROOM_ROUTE_ERRORS, 400],
    }),
    async (request) => listRooms(db, callerOf(request), request.query),
  )

  app.post(
    '/',
    routeOptions({
      operationId: 'roomsCreate',
      summary: 'Create a room (an existing direct room between the two is returned, 200)',
      description:
        'Creates a room with the caller as its owner and the chat identities of `conversation_ids` (of the ' +
        "caller's account, 400 naming any other) as members, and announces `room:created`. A direct room " +
        'takes exactly one other member and is returned as it is, with 200, when it exists between the two ' +
        'already; a group room needs `room_name` and is always new (201).',
      tags: ['rooms'],
      access: 'bearer',
      body: CreateBody,
      response: { 200: Room, 201: Room },
      example: { body: CREATE_EXAMPLE, response: ROOM_EXAMPLE },
      errors: [...ROOM_ROUTE_ERRORS, 400],
      answers: { 200: 'The direct room that exists between the two', 201: 'The room created' },
    }),
    async (request, reply) => {
      const { room, created } = await createRoom(deps, callerOf(request), request.body)
      return reply.status(created ? 201 : 200).send(room)
    },
  )

  app.get(
    '/favorites',
    routeOptions({
      operationId: 'roomsFavorites',
      summary: "The caller's favorite rooms (most recent activity first)",
      description:
        'The rooms the caller marked favorite, most recent activity first: `{ favorites: [ { _id, name, ' +
        'type, last_message, unread_count } ] }`.',
      tags: ['rooms'],
      access: 'bearer',
      response: { 200: FavoritesResponse },
      errors: ROOM_ROUTE_ERRORS,
    }),
    async (request) => ({ favorites: await listFavorites(db, callerOf(request)) }),
  )

  app.post(
    '/:roomId/favorite',
    routeOptions({
      operationId: 'roomsFavoriteToggle',
      summary: "Add the room to the caller's favorites, or take it out",
      description:
        "Adds the room to the caller's favorites when absent, takes it out when present, and answers `{ " +
        'success, room: { _id, name, is_favorite } }`. Members only: 400 `Cannot access this room` for a ' +
        'non-member, 404 `Room does not exist` for an unknown room.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      response: { 200: FavoriteResponse },
      errors: ROOM_ERRORS,
      answers: {
        400: 'Invalid request, or `Cannot access this room` (not a member)',
        404: '`Room does not exist`',
      },
    }),
    async (request) => ({
      success: true as const,
      room: await toggleFavorite(db, callerOf(request), request.params.roomId),
    }),
  )

  app.delete(
    '/',
    routeOptions({
      operationId: 'roomsDelete',
      summary: 'Delete a group room and its messages (owner only)',
      description:
        'Deletes the group room `roomId` with its messages (`room:deleted` to its members): its owner only ' +
        '(403 `Only room owner can delete`); a direct room is refused (400 `Cannot delete direct ' +
        "message`). Answers `{ success: true, message: 'Room deleted successfully' }`.",
      tags: ['rooms'],
      access: 'bearer',
      querystring: RoomIdQuery,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
      answers: {
        400: 'Invalid request, or `Cannot delete direct message`',
        403: '`Only room owner can delete`',
        404: '`Room does not exist`',
      },
    }),
    async (request) => {
      await deleteRoom(deps, callerOf(request), request.query.roomId)
      return { success: true as const, message: ROOM_DELETED }
    },
  )

  app.patch(
    '/',
    routeOptions({
      operationId: 'roomsRename',
      summary: 'Rename a group room (owner or admin)',
      description:
        'Renames a group room, posting a system message and `room:updated` (`name`). The owner or an admin ' +
        'only (403 `Only room owner or admin can rename the room`); a direct room is refused (400 `Cannot ' +
        'rename direct message`).',
      tags: ['rooms'],
      access: 'bearer',
      body: RenameBody,
      response: { 200: RenameResponse },
      errors: [...ROOM_ERRORS, 403],
      answers: { 403: '`Only room owner or admin can rename the room`', 404: '`Room does not exist`' },
    }),
    async (request) => ({
      success: true as const,
      room: await renameRoom(deps, callerOf(request), request.body),
    }),
  )

  app.post(
    '/:roomId/snooze',
    routeOptions({
      operationId: 'roomsSnooze',
      summary: 'Snooze the room for the caller: a preset duration or a custom time',
      description:
        'Snoozes the room for the caller until a custom `time` (Unix milliseconds, in the future) or a ' +
        '`preset` from now (30m, 1h, 8h, 24h), one of the two. Notifications stop until then; the unread ' +
        'count still grows.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      body: SnoozeBody,
      response: { 200: SnoozeResponse },
      errors: ROOM_ERRORS,
    }),
    async (request) => ({
      success: true as const,
      room: await snoozeRoom(db, callerOf(request), request.params.roomId, request.body),
    }),
  )

  app.post(
    '/:roomId/leave',
    routeOptions({
      operationId: 'roomsLeave',
      summary: 'Leave a group room (an owner leaving hands the room on)',
      description:
        'The caller leaves a group room (400 `Cannot leave direct message` for a direct one), recorded in ' +
        '`all_members` with a system message. An owner who leaves hands the room on: to the first admin, ' +
        'else the oldest member; the last one out deletes the room.',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      response: { 200: LeaveResponse },
      errors: ROOM_ERRORS,
      answers: {
        400: 'Invalid request, `Cannot leave direct message`, or `Cannot access this room`',
        404: '`Room does not exist`',
      },
    }),
    async (request) => ({
      success: true as const,
      room: await leaveRoom(deps, callerOf(request), request.params.roomId),
    }),
  )

  app.post(
    '/members',
    routeOptions({
      operationId: 'roomsAddMembers',
      summary: 'Add members to a group room (owner or admin; members already there are ignored)',
      description:
        "Adds chat identities of the caller's account to a group room as members, with a system message " +
        'and `room:member_added`. The owner or an admin only (403 `Only admins can add members`); members ' +
        'already there are ignored, and a direct room is refused (400 `Cannot add members to direct ' +
        'message`).',
      tags: ['rooms'],
      access: 'bearer',
      body: AddMembersBody,
      response: { 200: RoomResponse },
      errors: [...ROOM_ERRORS, 403],
      answers: { 403: '`Only admins can add members`', 404: '`Room does not exist`' },
    }),
    async (request) => ({
      success: true as const,
      room: await addMembers(deps, callerOf(request), request.body),
    }),
  )

  app.patch(
    '/owner',
    routeOptions({
      operationId: 'roomsTransferOwnership',
      summary: 'Hand the room to another member (owner only)',
      description:
        'The owner hands the room to another member (`conversationId`), becoming a plain member, with a ' +
        'system message. The owner only (403 `Only room owner can change the owner`); the target must be a ' +
        "member (400). Answers `{ success: true, message: 'Owner changed' }`.",
      tags: ['rooms'],
      access: 'bearer',
      body: OwnerBody,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
      answers: { 403: '`Only room owner can change the owner`', 404: '`Room does not exist`' },
    }),
    async (request) => {
      await transferOwnership(deps, callerOf(request), request.body)
      return { success: true as const, message: 'Owner changed' }
    },
  )

  app.patch(
    '/role',
    routeOptions({
      operationId: 'roomsChangeRole',
      summary: "Make a member an admin or a plain member (owner or admin; not the owner's role)",
      description:
        'Makes a member an `admin` or a plain `member`, with a system message and `room:updated` ' +
        '(`roles`). The owner or an admin only (403 `Only room owner or admin can change roles`); the ' +
        "owner's role is not changed this way (400: transfer the ownership instead). Answers `{ success: " +
        "true, message: 'Role changed' }`.",
      tags: ['rooms'],
      access: 'bearer',
      body: RoleBody,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
      answers: { 403: '`Only room owner or admin can change roles`', 404: '`Room does not exist`' },
    }),
    async (request) => {
      await changeRole(deps, callerOf(request), request.body)
      return { success: true as const, message: 'Role changed' }
    },
  )

  app.delete(
    '/:roomId/member',
    routeOptions({
      operationId: 'roomsRemoveMember',
      summary: 'Remove a member from a group room (owner or admin; never the owner)',
      description:
        'Removes the member `conversation_id` from a group room, recorded in `all_members`, with a system ' +
        'message and `room:member_removed`. The owner or an admin only: a plain member gets 403 with the ' +
        "spec's body `{ error: 'Only room owner or admin can remove a user from rooms', statusCode: 403 " +
        '}`; the owner cannot be removed (400 `The room owner cannot be removed`).',
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      querystring: RemoveQuery,
      response: { 200: RoomResponse, 403: RemovalRefusedBody },
      errors: ROOM_ERRORS,
      answers: {
        403:
          "A plain member: the spec's `{ error: 'Only room owner or admin can remove a user from rooms', " +
          'statusCode: 403 }`',
        404: '`Room does not exist`',
      },
    }),
    async (request, reply) => {
      try {
        const room = await removeMember(
          deps,
          callerOf(request),
          request.params.roomId,
          request.query.conversation_id,
        )
        return { success: true as const, room }
      } catch (error) {
        if (!(error instanceof RemovalRefused)) throw error
        return reply.status(403).send({ error: error.message, statusCode: 403 })
      }
    },
  )
}
