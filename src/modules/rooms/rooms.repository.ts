import { and, asc, eq, inArray, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { insertOrFind } from '../../platform/db/insert-or-find.js'
import type { RoomRow } from './room-access.repository.js'
import { roomMemberHistory, roomMembers, roomMessages, rooms } from './tables.js'

export type MemberRow = Pick<
  typeof roomMembers.$inferSelect,
  'roomId' | 'conversationId' | 'role' | 'joinedAt'
>
export type StayRow = Pick<typeof roomMemberHistory.$inferSelect, 'conversationId' | 'joinedAt' | 'leftAt'>
export type LastMessageRow = Pick<typeof roomMessages.$inferSelect, 'content' | 'createdAt' | 'senderId'>

/** The direct room of the pair, inserted, or found when it exists already (also one a concurrent request made). */
export function insertOrFindDirectRoom(
  tx: Database,
  accountId: string,
  values: { ownerId: string; directPair: string },
): Promise<{ row: RoomRow; created: boolean }> {
  return insertOrFind(
    tx,
    rooms,
    { ...values, accountId, type: 'direct' },
    and(eq(rooms.accountId, accountId), eq(rooms.directPair, values.directPair)),
  )
}

export async function insertGroupRoom(
  tx: Database,
  accountId: string,
  values: { ownerId: string; name: string },
): Promise<RoomRow> {
  const [row] = await tx
    .insert(rooms)
    .values({ ...values, accountId, type: 'group' })
    .returning()
  return row as RoomRow
}

/** The current members of the rooms, each room's in the order they joined. */
export function findMembers(db: Database, accountId: string, roomIds: string[]): Promise<MemberRow[]> {
  if (roomIds.length === 0) return Promise.resolve([])
  return db
    .select({
      roomId: roomMembers.roomId,
      conversationId: roomMembers.conversationId,
      role: roomMembers.role,
      joinedAt: roomMembers.joinedAt,
    })
    .from(roomMembers)
    .where(and(eq(roomMembers.accountId, accountId), inArray(roomMembers.roomId, roomIds)))
    .orderBy(asc(roomMembers.joinedAt), asc(roomMembers.conversationId))
}

/** Every stay of every identity in the room (`all_members`), oldest first. */
export function findStays(db: Database, accountId: string, roomId: string): Promise<StayRow[]> {
  return db
    .select({
      conversationId: roomMemberHistory.conversationId,
      joinedAt: roomMemberHistory.joinedAt,
      leftAt: roomMemberHistory.leftAt,
    })
    .from(roomMemberHistory)
    .where(and(eq(roomMemberHistory.accountId, accountId), eq(roomMemberHistory.roomId, roomId)))
    .orderBy(asc(roomMemberHistory.joinedAt), asc(roomMemberHistory.id))
}

export async function findLastMessage(
  db: Database,
  accountId: string,
  messageId: string,
): Promise<LastMessageRow | undefined> {
  const [row] = await db
    .select({
      content: roomMessages.content,
      createdAt: roomMessages.createdAt,
      senderId: roomMessages.senderId,
    })
    .from(roomMessages)
    .where(
      and(
        eq(roomMessages.accountId, accountId),
        eq(roomMessages.id, messageId),
        isNull(roomMessages.deletedAt),
      ),
    )
  return row
}

/** Deletes the room with its members, history and messages. */
export async function deleteRoomRow(tx: Database, accountId: string, roomId: string): Promise<void> {
  await tx.delete(rooms).where(and(eq(rooms.accountId, accountId), eq(rooms.id, roomId)))
}

export async function updateRoom(
  tx: Database,
  accountId: string,
  roomId: string,
  values: { name?: string; ownerId?: string },
): Promise<RoomRow> {
  const [row] = await tx
    .update(rooms)
    .set({ ...values, updatedAt: sql`now()` })
    .where(and(eq(rooms.accountId, accountId), eq(rooms.id, roomId)))
    .returning()
  return row as RoomRow
}
