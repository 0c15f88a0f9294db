import { and, eq, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type MessageKind, roomMembers, roomMessages, rooms } from './tables.js'

export type MessageRow = typeof roomMessages.$inferSelect

export interface NewMessage {
  accountId: string
  roomId: string
  senderId: string
  kind: MessageKind
  content: string
}

/**
 * Appends a message to its room: takes the room's next sequence number (the row update serialises
 * concurrent senders of one room), makes it the room's last message and activity, and moves the
 * sender's read marker past it when the sender had read everything before (the sender has seen it).
 */
export async function appendMessage(tx: Database, message: NewMessage): Promise<MessageRow> {
  const [room] = await tx
    .update(rooms)
    .set({ lastSeq: sql`${rooms.lastSeq} + 1`, lastActivity: sql`now()`, updatedAt: sql`now()` })
    .where(and(eq(rooms.accountId, message.accountId), eq(rooms.id, message.roomId)))
    .returning({ seq: rooms.lastSeq })
  if (!room) throw new Error(`appendMessage: room ${message.roomId} not found`)
  const [row] = await tx
    .insert(roomMessages)
    .values({ ...message, seq: room.seq })
    .returning()
  const inserted = row as MessageRow
  await tx
    .update(rooms)
    .set({ lastMessageId: inserted.id })
    .where(and(eq(rooms.accountId, message.accountId), eq(rooms.id, message.roomId)))
  await tx
    .update(roomMembers)
    .set({ readSeq: inserted.seq, readMessageId: inserted.id, readAt: inserted.createdAt })
    .where(
      and(
        eq(roomMembers.accountId, message.accountId),
        eq(roomMembers.roomId, message.roomId),
        eq(roomMembers.conversationId, message.senderId),
        eq(roomMembers.readSeq, inserted.seq - 1),
      ),
    )
  return inserted
}

/**
 * A member's unread count, the Mattermost way: the room's sequence minus the member's read sequence,
 * less the messages past the marker that do not count (the member's own, and deleted ones), which
 * two small index ranges find. Usable in the room list's one query, whatever the page holds.
 */
export const unreadCount = sql<number>`(
  ${rooms.lastSeq} - ${roomMembers.readSeq} - (
    select count(*) from ${roomMessages} m
    where m.room_id = ${rooms.id} and m.seq > ${roomMembers.readSeq}
      and (m.sender_id = ${roomMembers.conversationId} or m.deleted_at is not null)
  )
)::int`
