import { and, eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { roomMemberHistory, roomMembers, rooms } from '../../src/modules/rooms/tables.js'
import type { Tenant } from './fixtures.js'

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
