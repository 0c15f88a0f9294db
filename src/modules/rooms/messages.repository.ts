import { and, asc, desc, eq, getTableColumns, gt, isNull, lt, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { type MessageKind, roomMembers, roomMessages, rooms } from './tables.js'

// Every column but the search vector, which only the search's WHERE reads.
const { searchVector: _searchVector, ...messageColumnsWithVector } = getTableColumns(roomMessages)
export const messageColumns = messageColumnsWithVector

export type MessageRow = Omit<typeof roomMessages.$inferSelect, 'searchVector'>

export interface NewMessage {
  roomId: string
  senderId: string
  kind: MessageKind
  content: string
}

export interface Recipient {
  conversationId: string
  /** Snoozed now: still a recipient of the room's events, but not to be notified. */
  snoozed: boolean
}

/** A message just appended, with the room's members as they stand after it: its event's recipients. */
export interface AppendedMessage extends MessageRow {
  recipients: Recipient[]
}

const value = (name: string) => sql.placeholder(name)

/**
 * The send's one statement: migration 0042's `room_message_send` locks the room row, then appends in a
 * statement of its own, so that the append sees every membership change committed before the lock.
 */
const sendStatement = preparedStatement<{
  outcome: 'appended' | 'no_room' | 'not_member'
  seq: number
  created_ms: number
  notified: string[]
  snoozed: string[]
}>(
  'room_message_send',
  sql`select outcome, seq, created_ms, notified, snoozed from room_message_send(
    ${value('id')}, ${value('accountId')}, ${value('roomId')}, ${value('senderId')}, ${value('kind')},
    ${value('content')})`,
)

/** Why a message was not appended: no such room in the account, or a user's message from a non-member. */
export type NotAppended = 'no_room' | 'not_member'

/**
 * Appends a message to its room in one round trip, alone or inside the caller's transaction: locks the room
 * row (which serialises the room's senders and its membership changes), takes the room's next sequence
 * number, makes the message the room's last message and activity, moves the sender's read marker past it
 * when the sender had read everything before (the sender has seen it), and reads the room's members for its
 * event. A user message is appended only when its sender is a member.
 */
export async function appendMessage(
  db: Database,
  accountId: string,
  message: NewMessage,
): Promise<AppendedMessage | NotAppended> {
  const id = newId()
  const [row] = await sendStatement(db, { id, accountId, ...message })
  if (!row) return 'no_room'
  if (row.outcome !== 'appended') return row.outcome
  return {
    ...message,
    accountId,
    id,
    seq: row.seq,
    createdAt: new Date(row.created_ms),
    editedAt: null,
    deletedAt: null,
    recipients: [
      ...row.notified.map((conversationId) => ({ conversationId, snoozed: false })),
      ...row.snoozed.map((conversationId) => ({ conversationId, snoozed: true })),
    ],
  }
}

/** A system message about a change, in a room the caller has locked (so it exists). */
export async function appendSystemMessage(
  tx: Database,
  accountId: string,
  message: Omit<NewMessage, 'kind'>,
): Promise<AppendedMessage> {
  const row = await appendMessage(tx, accountId, { ...message, kind: 'system' })
  if (typeof row === 'string') throw new Error(`appendSystemMessage: room ${message.roomId} not found`)
  return row
}

/**
 * A member's unread count, the Mattermost way: the room's sequence minus the member's read sequence,
 * less the messages past the marker that do not count: the member's own, and the others' deleted ones.
 * Each is a count over one small index range (two counts, not one count of either, which PostgreSQL
 * answers with a bitmap of both ranges and a visit to every row: a third of a room list's time in the
 * database). Usable in the room list's one query, whatever the page holds.
 */
export const unreadCount = sql<number>`(
  ${rooms.lastSeq} - ${roomMembers.readSeq} - (
    select count(*) from ${roomMessages} m
    where m.account_id = ${rooms.accountId} and m.room_id = ${rooms.id} and m.seq > ${roomMembers.readSeq}
      and m.sender_id = ${roomMembers.conversationId}
  ) - (
    select count(*) from ${roomMessages} m
    where m.account_id = ${rooms.accountId} and m.room_id = ${rooms.id} and m.seq > ${roomMembers.readSeq}
      and m.deleted_at is not null and m.sender_id is distinct from ${roomMembers.conversationId}
  )
)::int`

const inRoom = (accountId: string, roomId: string) =>
  and(eq(roomMessages.accountId, accountId), eq(roomMessages.roomId, roomId))

/** A message of the room, deleted or not (deleted ones keep their place for cursors and read markers). */
export async function findMessage(
  db: Database,
  accountId: string,
  roomId: string,
  messageId: string,
): Promise<MessageRow | undefined> {
  const [row] = await db
    .select(messageColumns)
    .from(roomMessages)
    .where(and(inRoom(accountId, roomId), eq(roomMessages.id, messageId)))
  return row
}

/**
 * Up to `limit` messages not deleted, by sequence: with `afterSeq` the ones right after it, oldest first
 * (up to `beforeSeq` when given); otherwise the newest ones (before `beforeSeq` when given), newest first.
 */
export function listMessages(
  db: Database,
  accountId: string,
  roomId: string,
  window: { beforeSeq?: number; afterSeq?: number; limit: number },
): Promise<MessageRow[]> {
  const filters = [inRoom(accountId, roomId), isNull(roomMessages.deletedAt)]
  if (window.beforeSeq !== undefined) filters.push(lt(roomMessages.seq, window.beforeSeq))
  if (window.afterSeq !== undefined) filters.push(gt(roomMessages.seq, window.afterSeq))
  return db
    .select(messageColumns)
    .from(roomMessages)
    .where(and(...filters))
    .orderBy(window.afterSeq === undefined ? desc(roomMessages.seq) : asc(roomMessages.seq))
    .limit(window.limit)
}

const notDeleted = (accountId: string, messageId: string) =>
  and(eq(roomMessages.accountId, accountId), eq(roomMessages.id, messageId), isNull(roomMessages.deletedAt))

/** Replaces the content of a message not deleted; undefined when it was deleted meanwhile. */
export async function updateMessageContent(
  db: Database,
  accountId: string,
  messageId: string,
  content: string,
): Promise<MessageRow | undefined> {
  const [row] = await db
    .update(roomMessages)
    .set({ content, editedAt: sql`now()` })
    .where(notDeleted(accountId, messageId))
    .returning(messageColumns)
  return row
}

/**
 * Marks the message deleted (its row and sequence stay, so counts and cursors keep working); when it was
 * the room's last message, the room's last message becomes the latest one not deleted. False when it
 * was deleted already.
 */
export async function markMessageDeleted(
  tx: Database,
  accountId: string,
  message: Pick<MessageRow, 'id' | 'roomId'>,
): Promise<boolean> {
  const deleted = await tx
    .update(roomMessages)
    .set({ deletedAt: sql`now()` })
    .where(notDeleted(accountId, message.id))
    .returning({ id: roomMessages.id })
  if (deleted.length === 0) return false
  await tx
    .update(rooms)
    .set({
      lastMessageId: sql`(
        select m.id from ${roomMessages} m
        where m.account_id = ${accountId} and m.room_id = ${message.roomId} and m.deleted_at is null
        order by m.seq desc limit 1
      )`,
    })
    .where(
      and(eq(rooms.accountId, accountId), eq(rooms.id, message.roomId), eq(rooms.lastMessageId, message.id)),
    )
  return true
}

/** Moves a member's read marker to the message, only forward: an older message leaves it where it is. */
export async function moveReadMarker(
  db: Database,
  accountId: string,
  conversationId: string,
  message: Pick<MessageRow, 'id' | 'roomId' | 'seq'>,
): Promise<void> {
  await db
    .update(roomMembers)
    .set({ readSeq: message.seq, readMessageId: message.id, readAt: sql`now()` })
    .where(
      and(
        eq(roomMembers.accountId, accountId),
        eq(roomMembers.roomId, message.roomId),
        eq(roomMembers.conversationId, conversationId),
        lt(roomMembers.readSeq, message.seq),
      ),
    )
}

export interface ReadState {
  readMessageId: string | null
  readAt: Date | null
  unread: number
}

/** A member's read marker and unread count in the room; undefined when it is not a member. */
export async function findReadState(
  db: Database,
  accountId: string,
  roomId: string,
  conversationId: string,
): Promise<ReadState | undefined> {
  const [row] = await db
    .select({ readMessageId: roomMembers.readMessageId, readAt: roomMembers.readAt, unread: unreadCount })
    .from(roomMembers)
    .innerJoin(rooms, and(eq(rooms.accountId, accountId), eq(rooms.id, roomMembers.roomId)))
    .where(
      and(
        eq(roomMembers.accountId, accountId),
        eq(roomMembers.roomId, roomId),
        eq(roomMembers.conversationId, conversationId),
      ),
    )
  return row
}

/** The room's current members, as recipients of its events. */
export function findRecipients(db: Database, accountId: string, roomId: string): Promise<Recipient[]> {
  return db
    .select({
      conversationId: roomMembers.conversationId,
      snoozed: sql<boolean>`coalesce(${roomMembers.snoozedUntil} > now(), false)`,
    })
    .from(roomMembers)
    .where(and(eq(roomMembers.accountId, accountId), eq(roomMembers.roomId, roomId)))
}
