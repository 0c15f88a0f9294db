import { and, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type RoomRole, roomMembers, rooms } from './tables.js'

export type RoomRow = typeof rooms.$inferSelect

/** The account's room, locked for the rest of the transaction when `forUpdate` (membership changes). */
export async function findRoom(
  db: Database,
  accountId: string,
  roomId: string,
  options: { forUpdate?: boolean } = {},
): Promise<RoomRow | undefined> {
  const query = db
    .select()
    .from(rooms)
    .where(and(eq(rooms.accountId, accountId), eq(rooms.id, roomId)))
  const [row] = options.forUpdate ? await query.for('update') : await query
  return row
}

/** The role of an identity among the room's current members, or undefined when it is not one. */
export async function findMemberRole(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<RoomRole | undefined> {
  const [row] = await db
    .select({ role: roomMembers.role })
    .from(roomMembers)
    .where(
      and(
        eq(roomMembers.accountId, accountId),
        eq(roomMembers.roomId, roomId),
        eq(roomMembers.conversationId, conversationId),
      ),
    )
  return row?.role
}
