import { and, asc, eq, inArray, isNull, not, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import type { MessageRow } from './messages.repository.js'
import { type RoomRole, roomMemberHistory, roomMembers } from './tables.js'

const member = (accountId: string, roomId: string, conversationId: string) =>
  and(
    eq(roomMembers.accountId, accountId),
    eq(roomMembers.roomId, roomId),
    eq(roomMembers.conversationId, conversationId),
  )

/** The ids of the room's current members. */
export async function findMemberIds(db: Database, accountId: string, roomId: string): Promise<string[]> {
  const rows = await db
    .select({ conversationId: roomMembers.conversationId })
    .from(roomMembers)
    .where(and(eq(roomMembers.accountId, accountId), eq(roomMembers.roomId, roomId)))
  return rows.map((row) => row.conversationId)
}

/** The member of the room with this role who joined first (undefined when there is none). */
export async function findFirstJoinedWithRole(
  tx: Database,
  accountId: string,
  roomId: string,
  role: RoomRole,
): Promise<string | undefined> {
  const [row] = await tx
    .select({ conversationId: roomMembers.conversationId })
    .from(roomMembers)
    .where(
      and(eq(roomMembers.accountId, accountId), eq(roomMembers.roomId, roomId), eq(roomMembers.role, role)),
    )
    .orderBy(asc(roomMembers.joinedAt), asc(roomMembers.conversationId))
    .limit(1)
  return row?.conversationId
}

/**
 * Makes the identities members with a role, each read marker at `readSeq` (nothing before it unread) and
 * the room's last activity (the room list's order), and opens their stay in the history; identities already
 * members are left as they are. Returns those added.
 */
export async function insertMembers(
  tx: Database,
  accountId: string,
  room: { id: string; lastSeq: number; lastActivity: Date },
  members: { conversationId: string; role: RoomRole }[],
): Promise<string[]> {
  if (members.length === 0) return []
  const added = await tx
    .insert(roomMembers)
    .values(
      members.map((member) => ({
        ...member,
        accountId,
        roomId: room.id,
        readSeq: room.lastSeq,
        lastActivity: room.lastActivity,
      })),
    )
    .onConflictDoNothing()
    .returning({ conversationId: roomMembers.conversationId })
  const ids = added.map((row) => row.conversationId)
  if (ids.length > 0) {
    await tx
      .insert(roomMemberHistory)
      .values(ids.map((conversationId) => ({ accountId, roomId: room.id, conversationId })))
  }
  return ids
}

/** Takes the identity out of the room's current members and closes its stay in the history. */
export async function deleteMember(
  tx: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<void> {
  await tx.delete(roomMembers).where(member(accountId, roomId, conversationId))
  await tx
    .update(roomMemberHistory)
    .set({ leftAt: sql`now()` })
    .where(
      and(
        eq(roomMemberHistory.accountId, accountId),
        eq(roomMemberHistory.roomId, roomId),
        eq(roomMemberHistory.conversationId, conversationId),
        isNull(roomMemberHistory.leftAt),
      ),
    )
}

export async function setRole(
  tx: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
  role: RoomRole,
): Promise<void> {
  await tx
    .update(roomMembers)
    .set({ role })
    .where(member(accountId, roomId, conversationId))
}

/** Moves the members' read markers to `message` (new members have seen the message announcing them). */
export async function markRead(
  tx: Database,
  accountId: string,
  roomId: string,
  conversationIds: string[],
  message: MessageRow,
): Promise<void> {
  await tx
    .update(roomMembers)
    .set({ readSeq: message.seq, readMessageId: message.id, readAt: message.createdAt })
    .where(
      and(
        eq(roomMembers.accountId, accountId),
        eq(roomMembers.roomId, roomId),
        inArray(roomMembers.conversationId, conversationIds),
      ),
    )
}

/** Flips the caller's favorite flag on the room; the new value. */
export async function toggleFavoriteFlag(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<boolean> {
  const [row] = await db
    .update(roomMembers)
    .set({ isFavorite: not(roomMembers.isFavorite) })
    .where(member(accountId, roomId, conversationId))
    .returning({ isFavorite: roomMembers.isFavorite })
  return row?.isFavorite ?? false
}

export async function setSnoozedUntil(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
  until: Date,
): Promise<void> {
  await db
    .update(roomMembers)
    .set({ snoozedUntil: until })
    .where(member(accountId, roomId, conversationId))
}
