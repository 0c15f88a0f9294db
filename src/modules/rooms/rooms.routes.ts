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
  addRoomRouteHooks(app, platform)

  app.get(
    '/',
    routeOptions({
      operationId: 'roomsList',
      summary: "List the caller's rooms (most recent activity first)",
      tags: ['rooms'],
      access: 'bearer',
      querystring: ListQuery,
      response: { 200: ListResponse },
      errors: [...ROOM_ROUTE_ERRORS, 400],
    }),
    async (request) => listRooms(db, callerOf(request), request.query),
  )

  app.post(
    '/',
    routeOptions({
      operationId: 'roomsCreate',
      summary: 'Create a room (an existing direct room between the two is returned, 200)',
      tags: ['rooms'],
      access: 'bearer',
      body: CreateBody,
      response: { 200: Room, 201: Room },
      errors: [...ROOM_ROUTE_ERRORS, 400],
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
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      response: { 200: FavoriteResponse },
      errors: ROOM_ERRORS,
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
      tags: ['rooms'],
      access: 'bearer',
      querystring: RoomIdQuery,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
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
      tags: ['rooms'],
      access: 'bearer',
      body: RenameBody,
      response: { 200: RenameResponse },
      errors: [...ROOM_ERRORS, 403],
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
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      response: { 200: LeaveResponse },
      errors: ROOM_ERRORS,
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
      tags: ['rooms'],
      access: 'bearer',
      body: AddMembersBody,
      response: { 200: RoomResponse },
      errors: [...ROOM_ERRORS, 403],
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
      tags: ['rooms'],
      access: 'bearer',
      body: OwnerBody,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
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
      tags: ['rooms'],
      access: 'bearer',
      body: RoleBody,
      response: { 200: Done },
      errors: [...ROOM_ERRORS, 403],
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
      tags: ['rooms'],
      access: 'bearer',
      params: RoomParams,
      querystring: RemoveQuery,
      response: { 200: RoomResponse, 403: RemovalRefusedBody },
      errors: ROOM_ERRORS,
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
