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

/**
 * The account's room and the identity's role among its current members (undefined when it is not one),
 * in one query. Not for locking: a row lock waits for a concurrent change of the room, and the role read
 * in the same statement would be the one from before that change; `lockRoomAndRole` reads it after.
 */
export async function findRoomAndRole(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<{ room: RoomRow; role: RoomRole | undefined } | undefined> {
  const [row] = await db
    .select({ room: rooms, role: roomMembers.role })
    .from(rooms)
    .leftJoin(
      roomMembers,
      and(
        eq(roomMembers.accountId, accountId),
        eq(roomMembers.roomId, rooms.id),
        eq(roomMembers.conversationId, conversationId),
      ),
    )
    .where(and(eq(rooms.accountId, accountId), eq(rooms.id, roomId)))
  return row && { room: row.room, role: row.role ?? undefined }
}

/**
 * Locks the account's room row for the rest of the transaction, then reads the identity's role: in its
 * own statement, so that it sees what a concurrent change the lock waited for (an owner leaving, a
 * member removed) committed.
 */
export async function lockRoomAndRole(
  tx: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<{ room: RoomRow; role: RoomRole | undefined } | undefined> {
  const room = await findRoom(tx, accountId, roomId, { forUpdate: true })
  return room && { room, role: await findMemberRole(tx, accountId, roomId, conversationId) }
}
