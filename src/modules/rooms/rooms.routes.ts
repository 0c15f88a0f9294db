import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
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
import { callerOf, roomRouteOptions } from './room-access.routes.js'
import { FavoritesResponse, ListQuery, ListResponse } from './room-list.schemas.js'
import { listFavorites, listRooms } from './room-list.service.js'
import {
  CreateBody,
  Done,
  FavoriteResponse,
  RenameBody,
  RenameResponse,
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
  const route = roomRouteOptions(app, platform)
  // Every room route may answer these: no token or no chat identity, the rate limit.
  const denied = errorResponses(401, 429)
  // And these when it names a room: not a member, another account's or an unknown room.
  const inRoom = errorResponses(400, 401, 404, 429)

  app.get(
    '/',
    route('roomsList', "List the caller's rooms (most recent activity first)", {
      querystring: ListQuery,
      response: { 200: ListResponse, ...errorResponses(400), ...denied },
    }),
    async (request) => listRooms(db, callerOf(request), request.query),
  )

  app.post(
    '/',
    route('roomsCreate', 'Create a room (an existing direct room between the two is returned, 200)', {
      body: CreateBody,
      response: { 200: Room, 201: Room, ...errorResponses(400), ...denied },
    }),
    async (request, reply) => {
      const { room, created } = await createRoom(deps, callerOf(request), request.body)
      return reply.status(created ? 201 : 200).send(room)
    },
  )

  app.get(
    '/favorites',
    route('roomsFavorites', "The caller's favorite rooms (most recent activity first)", {
      response: { 200: FavoritesResponse, ...denied },
    }),
    async (request) => ({ favorites: await listFavorites(db, callerOf(request)) }),
  )

  app.post(
    '/:roomId/favorite',
    route('roomsFavoriteToggle', "Add the room to the caller's favorites, or take it out", {
      params: RoomParams,
      response: { 200: FavoriteResponse, ...inRoom },
    }),
    async (request) => ({
      success: true as const,
      room: await toggleFavorite(db, callerOf(request), request.params.roomId),
    }),
  )

  app.delete(
    '/',
    route('roomsDelete', 'Delete a group room and its messages (owner only)', {
      querystring: RoomIdQuery,
      response: { 200: Done, ...inRoom, ...errorResponses(403) },
    }),
    async (request) => {
      await deleteRoom(deps, callerOf(request), request.query.roomId)
      return { success: true as const, message: ROOM_DELETED }
    },
  )

  app.patch(
    '/',
    route('roomsRename', 'Rename a group room (owner or admin)', {
      body: RenameBody,
      response: { 200: RenameResponse, ...inRoom, ...errorResponses(403) },
    }),
    async (request) => ({
      success: true as const,
      room: await renameRoom(deps, callerOf(request), request.body),
    }),
  )

  app.post(
    '/:roomId/snooze',
    route('roomsSnooze', 'Snooze the room for the caller: a preset duration or a custom time', {
      params: RoomParams,
      body: SnoozeBody,
      response: { 200: SnoozeResponse, ...inRoom },
    }),
    async (request) => ({
      success: true as const,
      room: await snoozeRoom(db, callerOf(request), request.params.roomId, request.body),
    }),
  )

  app.post(
    '/:roomId/leave',
    route('roomsLeave', 'Leave a group room (an owner leaving hands the room on)', {
      params: RoomParams,
      response: { 200: LeaveResponse, ...inRoom },
    }),
    async (request) => ({
      success: true as const,
      room: await leaveRoom(deps, callerOf(request), request.params.roomId),
    }),
  )

  app.post(
    '/members',
    route(
      'roomsAddMembers',
      'Add members to a group room (owner or admin; members already there are ignored)',
      {
        body: AddMembersBody,
        response: { 200: RoomResponse, ...inRoom, ...errorResponses(403) },
      },
    ),
    async (request) => ({
      success: true as const,
      room: await addMembers(deps, callerOf(request), request.body),
    }),
  )

  app.patch(
    '/owner',
    route('roomsTransferOwnership', 'Hand the room to another member (owner only)', {
      body: OwnerBody,
      response: { 200: Done, ...inRoom, ...errorResponses(403) },
    }),
    async (request) => {
      await transferOwnership(deps, callerOf(request), request.body)
      return { success: true as const, message: 'Owner changed' }
    },
  )

  app.patch(
    '/role',
    route(
      'roomsChangeRole',
      "Make a member an admin or a plain member (owner or admin; not the owner's role)",
      {
        body: RoleBody,
        response: { 200: Done, ...inRoom, ...errorResponses(403) },
      },
    ),
    async (request) => {
      await changeRole(deps, callerOf(request), request.body)
      return { success: true as const, message: 'Role changed' }
    },
  )

  app.delete(
    '/:roomId/member',
    route('roomsRemoveMember', 'Remove a member from a group room (owner or admin; never the owner)', {
      params: RoomParams,
      querystring: RemoveQuery,
      response: { 200: RoomResponse, ...inRoom, 403: RemovalRefusedBody },
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
