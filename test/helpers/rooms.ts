import { and, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { expect, vi } from 'vitest'
import { type RoomEvent, RoomEvents } from '../../src/modules/rooms/room-events.js'
import { roomMemberHistory, roomMembers, rooms } from '../../src/modules/rooms/tables.js'
import type { Tenant } from './fixtures.js'

export const ROOMS = '/api/conversation-v2/room'

/** A call to a room route (`path` under the rooms prefix) as `tenant`. */
export function roomCall(
  app: FastifyInstance,
  tenant: Tenant,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  payload?: object,
) {
  return app.inject({ method, url: `${ROOMS}${path}`, headers: tenant.headers, payload })
}

export interface CreatedRoom {
  _id: string
  type: 'direct' | 'group'
  name: string | null
  owner: string
  members: { conversation_id: string; joined_at: string }[]
  roles: { conversation_id: string; type: string }[]
  all_members: { conversation_id: string; joined_at: string; left_at?: string }[]
}

/** A group room made by `creator` with `members`; `admins` among them are then made admins. */
export async function createGroup(
  app: FastifyInstance,
  creator: Tenant,
  members: Tenant[],
  options: { name?: string; admins?: Tenant[] } = {},
): Promise<CreatedRoom> {
  const response = await roomCall(app, creator, 'POST', '/', {
    type: 'group',
    room_name: options.name ?? 'Team',
    conversation_ids: members.map((member) => member.conversationId),
  })
  if (response.statusCode !== 201) throw new Error(`create answered ${response.statusCode}: ${response.body}`)
  const room = response.json() as CreatedRoom
  for (const admin of options.admins ?? []) {
    const promoted = await roomCall(app, creator, 'PATCH', '/role', {
      roomId: room._id,
      conversationId: admin.conversationId,
      role: 'admin',
    })
    if (promoted.statusCode !== 200) throw new Error(`role answered ${promoted.statusCode}: ${promoted.body}`)
  }
  return room
}

/** The direct room between `creator` and `other` (created, or the one there is). */
export async function createDirect(
  app: FastifyInstance,
  creator: Tenant,
  other: Tenant,
): Promise<CreatedRoom> {
  const response = await roomCall(app, creator, 'POST', '/', {
    type: 'direct',
    conversation_ids: [other.conversationId],
  })
  if (response.statusCode >= 300) throw new Error(`create answered ${response.statusCode}: ${response.body}`)
  return response.json() as CreatedRoom
}

/**
 * Records the room events delivered to the gateway from now on in this test file, each with its recipients
 * (whatever sink the app was given).
 */
export function recordRoomEvents(): RoomEvent[] {
  const delivered: RoomEvent[] = []
  const deliver = RoomEvents.prototype.deliverAfterCommit
  vi.spyOn(RoomEvents.prototype, 'deliverAfterCommit').mockImplementation(function (this: RoomEvents) {
    deliver.call(this, {
      toIdentities: (recipients, event, data) =>
        void delivered.push({ event, data, recipients: [...recipients] }),
    })
  })
  return delivered
}

/**
 * A room of the first member's account written straight into the tables, the first member its owner and
 * the others plain members (direct rooms take exactly two).
 */
export async function createRoomWithMembers(
  app: FastifyInstance,
  type: 'direct' | 'group',
  members: Tenant[],
  name = 'Team room',
): Promise<string> {
  const [owner] = members
  if (!owner) throw new Error('a room needs members')
  const ids = members.map((m) => m.conversationId)
  const { accountId } = owner
  return app.platform.db.transaction(async (tx) => {
    const [room] = await tx
      .insert(rooms)
      .values({
        accountId,
        type,
        name: type === 'group' ? name : null,
        ownerId: owner.conversationId,
        directPair: type === 'direct' ? [...ids].sort().join(':') : null,
      })
      .returning({ id: rooms.id })
    const roomId = (room as { id: string }).id
    await tx.insert(roomMembers).values(
      ids.map((conversationId, i) => ({
        accountId,
        roomId,
        conversationId,
        role: i === 0 ? ('owner' as const) : ('member' as const),
      })),
    )
    await tx
      .insert(roomMemberHistory)
      .values(ids.map((conversationId) => ({ accountId, roomId, conversationId })))
    return roomId
  })
}

/** Snoozes a member's notifications of the room until `until`. */
export async function snoozeMember(app: FastifyInstance, roomId: string, member: Tenant, until: Date) {
  await app.platform.db
    .update(roomMembers)
    .set({ snoozedUntil: until })
    .where(and(eq(roomMembers.roomId, roomId), eq(roomMembers.conversationId, member.conversationId)))
}

/** Takes a member out of the room, as leaving does. */
export async function removeMember(app: FastifyInstance, roomId: string, member: Tenant) {
  await app.platform.db
    .delete(roomMembers)
    .where(and(eq(roomMembers.roomId, roomId), eq(roomMembers.conversationId, member.conversationId)))
}

/** A message `member` posts to the room through the API (the test fails on any answer but 201). */
export async function postMessage(app: FastifyInstance, member: Tenant, roomId: string, content: string) {
  const response = await roomCall(app, member, 'POST', `/${roomId}/messages`, { content })
  expect(response.statusCode, response.body).toBe(201)
  return response.json().message as { _id: string; content: string; created_at: string }
}
