import { and, eq, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedStatement } from '../../platform/db/prepared.js'
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
 * in one query; `forUpdate` locks the room row for the rest of the transaction.
 */
export async function findRoomAndRole(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
  options: { forUpdate?: boolean } = {},
): Promise<{ room: RoomRow; role: RoomRole | undefined } | undefined> {
  const query = db
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
  const [row] = options.forUpdate ? await query.for('update', { of: rooms }) : await query
  return row && { room: row.room, role: row.role ?? undefined }
}

const lockRoomStatement = preparedStatement<{ role: RoomRole | null }>(
  'room_lock_for_role',
  sql`select m.role from ${rooms} r
    left join ${roomMembers} m
      on m.account_id = r.account_id and m.room_id = r.id and m.conversation_id = ${sql.placeholder('conversationId')}
    where r.account_id = ${sql.placeholder('accountId')} and r.id = ${sql.placeholder('roomId')}
    for update of r`,
)

/**
 * Locks the account's room row for the rest of the transaction and answers the identity's role in it:
 * `{ role: undefined }` when it is not a member, undefined when there is no such room.
 */
export async function lockRoomForRole(
  tx: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<{ role: RoomRole | undefined } | undefined> {
  const [row] = await lockRoomStatement(tx, { accountId, roomId, conversationId })
  return row && { role: row.role ?? undefined }
}
