import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { Forbidden, Invalid, NotFound } from '../../platform/http/errors.js'
import {
  type AppendedMessage,
  appendMessage,
  findMessage,
  findReadState,
  findRecipients,
  listMessages,
  type MessageRow,
  markMessageDeleted,
  moveReadMarker,
  updateMessageContent,
} from './messages.repository.js'
import type { Message, MessageList, MessageListQuery, ReadMarker } from './messages.schemas.js'
import {
  CANNOT_ACCESS_THIS_ROOM,
  ROOM_DOES_NOT_EXIST,
  type RoomCaller,
  requireRoomMember,
} from './room-access.service.js'
import { inRoomStatement, inRoomTransaction, type RoomEventDeps, type RoomEvents } from './room-events.js'

export const MESSAGE_NOT_FOUND = 'Message not found'
export const ONLY_OWN_MESSAGES = 'Only the sender can change a message'
export const MESSAGE_DELETED = 'Message deleted successfully'

export const messageView = (row: MessageRow): Message => ({
  _id: row.id,
  room_id: row.roomId,
  sender_id: row.senderId,
  kind: row.kind,
  content: row.content,
  created_at: row.createdAt.toISOString(),
  edited_at: row.editedAt?.toISOString() ?? null,
})

/**
 * Stages `message:new` for the room's members as its append read them. Snoozed members receive it like
 * the others (their clients stay in step) with `notify: false`, so that no client alerts them until the
 * snooze ends; everyone else gets `notify: true` (a client never alerts for its own identity's message).
 */
export async function stageNewMessage(
  tx: Database,
  roomEvents: RoomEvents,
  message: AppendedMessage,
): Promise<void> {
  const data = { room_id: message.roomId, message: messageView(message) }
  for (const notify of [true, false]) {
    const group = message.recipients.filter((r) => r.snoozed !== notify).map((r) => r.conversationId)
    if (group.length > 0)
      await roomEvents.stage(tx, { event: 'message:new', data: { ...data, notify }, recipients: group })
  }
}

/** Stages an event about the room for its current members. */
async function stageForMembers(
  tx: Database,
  roomEvents: RoomEvents,
  accountId: string,
  roomId: string,
  event: string,
  data: unknown,
): Promise<void> {
  const recipients = await findRecipients(tx, accountId, roomId)
  await roomEvents.stage(tx, { event, data, recipients: recipients.map((r) => r.conversationId) })
}

/**
 * A member posts to the room: one statement that locks the room row, so that a concurrent removal takes
 * effect before or after it, and appends (migration 0042's `room_message_send`).
 */
export function sendMessage(
  deps: RoomEventDeps,
  caller: RoomCaller,
  roomId: string,
  content: string,
): Promise<Message> {
  if (!isId(roomId)) return Promise.reject(new NotFound(ROOM_DOES_NOT_EXIST))
  return inRoomStatement(deps, caller.accountId, async (db, roomEvents) => {
    const row = await appendMessage(db, caller.accountId, {
      roomId,
      senderId: caller.conversationId,
      kind: 'user',
      content,
    })
    if (row === 'no_room') throw new NotFound(ROOM_DOES_NOT_EXIST)
    if (row === 'not_member') throw new Invalid(CANNOT_ACCESS_THIS_ROOM)
    await stageNewMessage(db, roomEvents, row)
    return messageView(row)
  })
}

/** A message of the room by id, deleted or not; 404 when the room has no such message. */
async function requireMessage(db: Database, caller: RoomCaller, roomId: string, messageId: string) {
  const message = isId(messageId) ? await findMessage(db, caller.accountId, roomId, messageId) : undefined
  if (!message) throw new NotFound(MESSAGE_NOT_FOUND)
  return message
}

/** The caller's own message, not deleted: 404 for an unknown or deleted one, 403 for anyone else's. */
async function requireOwnMessage(db: Database, caller: RoomCaller, roomId: string, messageId: string) {
  await requireRoomMember(db, caller, roomId)
  const message = await requireMessage(db, caller, roomId, messageId)
  if (message.deletedAt) throw new NotFound(MESSAGE_NOT_FOUND)
  if (message.kind !== 'user' || message.senderId !== caller.conversationId)
    throw new Forbidden(ONLY_OWN_MESSAGES)
  return message
}

export function editMessage(
  deps: RoomEventDeps,
  caller: RoomCaller,
  roomId: string,
  messageId: string,
  content: string,
): Promise<Message> {
  return inRoomTransaction(deps, caller.accountId, async (tx, roomEvents) => {
    const message = await requireOwnMessage(tx, caller, roomId, messageId)
    const row = await updateMessageContent(tx, caller.accountId, message.id, content)
    if (!row) throw new NotFound(MESSAGE_NOT_FOUND)
    const view = messageView(row)
    await stageForMembers(tx, roomEvents, caller.accountId, roomId, 'message:updated', {
      room_id: roomId,
      message: view,
    })
    return view
  })
}

export function deleteMessage(
  deps: RoomEventDeps,
  caller: RoomCaller,
  roomId: string,
  messageId: string,
): Promise<void> {
  return inRoomTransaction(deps, caller.accountId, async (tx, roomEvents) => {
    const message = await requireOwnMessage(tx, caller, roomId, messageId)
    if (!(await markMessageDeleted(tx, caller.accountId, message))) throw new NotFound(MESSAGE_NOT_FOUND)
    await stageForMembers(tx, roomEvents, caller.accountId, roomId, 'message:deleted', {
      room_id: roomId,
      message_id: message.id,
    })
  })
}

/**
 * A page of the room's messages, newest first, deleted ones left out. `before` and `after` are messages
 * of the room (deleted ones too: they keep their place); with `after` the page holds the messages right
 * after it, so that a client catching up misses none.
 */
export async function listRoomMessages(
  db: Database,
  caller: RoomCaller,
  roomId: string,
  query: MessageListQuery,
): Promise<MessageList> {
  await requireRoomMember(db, caller, roomId)
  const cursor = async (field: 'before' | 'after', id: string | undefined) => {
    if (id === undefined) return undefined
    const message = await findMessage(db, caller.accountId, roomId, id)
    if (!message) throw new Invalid(`${field} is not a message of this room`)
    return message.seq
  }
  const beforeSeq = await cursor('before', query.before)
  const afterSeq = await cursor('after', query.after)
  const rows = await listMessages(db, caller.accountId, roomId, {
    beforeSeq,
    afterSeq,
    limit: query.limit + 1,
  })
  const page = rows.slice(0, query.limit)
  if (afterSeq !== undefined) page.reverse()
  return { messages: page.map(messageView), has_more: rows.length > query.limit }
}

/** Moves the caller's read marker forward to the message (never back) and tells what remains unread. */
export async function markRead(
  db: Database,
  caller: RoomCaller,
  roomId: string,
  messageId: string,
): Promise<ReadMarker> {
  await requireRoomMember(db, caller, roomId)
  const message = await requireMessage(db, caller, roomId, messageId)
  await moveReadMarker(db, caller.accountId, caller.conversationId, message)
  const state = await findReadState(db, caller.accountId, roomId, caller.conversationId)
  // Removed from the room between the check and now.
  if (!state) throw new Invalid(CANNOT_ACCESS_THIS_ROOM)
  return {
    success: true,
    last_message_read: {
      conversation_id: caller.conversationId,
      message_id: state.readMessageId,
      timestamp: state.readAt?.toISOString() ?? null,
    },
    unread_count: state.unread,
  }
}
