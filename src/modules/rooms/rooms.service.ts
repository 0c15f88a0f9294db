import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Forbidden, Invalid } from '../../platform/http/errors.js'
import { type ChatIdentity, findChatIdentities } from '../accounts/chat-identities.service.js'
import { findMemberIds, insertMembers, setSnoozedUntil, toggleFavoriteFlag } from './membership.repository.js'
import { appendSystemMessage, type MessageRow } from './messages.repository.js'
import { stageNewMessage } from './messages.service.js'
import { findRoom, type RoomRow } from './room-access.repository.js'
import { type RoomCaller, requireRoomMember } from './room-access.service.js'
import { inRoomTransaction, type RoomEventDeps, type RoomEvents } from './room-events.js'
import {
  deleteRoomRow,
  findLastMessage,
  findMembers,
  findStays,
  insertGroupRoom,
  insertOrFindDirectRoom,
  type LastMessageRow,
  updateRoom,
} from './rooms.repository.js'
import { type CreateBody, type Room, SNOOZE_PRESETS, type SnoozeBody } from './rooms.schemas.js'

export const ROOM_DELETED = 'Room deleted successfully'
export const ONLY_OWNER_CAN_DELETE = 'Only room owner can delete'
export const CANNOT_DELETE_DIRECT = 'Cannot delete direct message'
export const CANNOT_RENAME_DIRECT = 'Cannot rename direct message'
export const ONLY_OWNER_OR_ADMIN_CAN_RENAME = 'Only room owner or admin can rename the room'

const iso = (date: Date) => date.toISOString()

export const lastMessageView = (row: LastMessageRow | null | undefined): Room['last_message'] =>
  row ? { content: row.content, created_at: iso(row.createdAt), sender_id: row.senderId } : null

/** The room as its members see it: roles, current members, every stay (`all_members`), last message. */
export async function loadRoom(db: Database, accountId: string, roomId: string): Promise<Room> {
  const room = (await findRoom(db, accountId, roomId)) as RoomRow
  // One after the other: inside a transaction they share one connection.
  const members = await findMembers(db, accountId, [room.id])
  const stays = await findStays(db, accountId, room.id)
  const lastMessage = room.lastMessageId
    ? await findLastMessage(db, accountId, room.lastMessageId)
    : undefined
  return {
    _id: room.id,
    type: room.type,
    name: room.name,
    owner: room.ownerId,
    roles: members.map((m) => ({ conversation_id: m.conversationId, type: m.role })),
    members: members.map((m) => ({ conversation_id: m.conversationId, joined_at: iso(m.joinedAt) })),
    all_members: stays.map((stay) => ({
      conversation_id: stay.conversationId,
      joined_at: iso(stay.joinedAt),
      ...(stay.leftAt && { left_at: iso(stay.leftAt) }),
    })),
    last_message: lastMessageView(lastMessage),
    last_activity: iso(room.lastActivity),
    account_id: room.accountId,
    created_at: iso(room.createdAt),
    updated_at: iso(room.updatedAt),
  }
}

/**
 * The chat identities among `ids`, all of the caller's account: any other id (another account's, unknown,
 * malformed) is refused with a 400 naming it.
 */
export async function requireIdentities(
  db: Database,
  accountId: string,
  ids: string[],
): Promise<Map<string, ChatIdentity>> {
  const identities = await findChatIdentities(db, accountId, ids)
  const unknown = ids.filter((id) => !identities.has(id))
  if (unknown.length > 0) {
    throw new Invalid(`conversation_ids: ${unknown[0]} is not a chat identity of this account`, {
      conversation_ids: unknown,
    })
  }
  return identities
}

/** The display name of each identity among `ids` (its user's name; the id itself when there is none). */
export async function displayNames(
  db: Database,
  accountId: string,
  ids: string[],
): Promise<(id: string) => string> {
  const identities = await findChatIdentities(db, accountId, ids)
  return (id) => identities.get(id)?.user.name || id
}

/** A system message about a change, sent by the member who made it, and its `message:new` to the members. */
export async function postSystemMessage(
  tx: Database,
  events: RoomEvents,
  caller: RoomCaller,
  roomId: string,
  content: string,
): Promise<MessageRow> {
  const message = await appendSystemMessage(tx, caller.accountId, {
    roomId,
    senderId: caller.conversationId,
    content,
  })
  await stageNewMessage(tx, events, message)
  return message
}

/** Stages `room:updated` with its `update_type` for the room's current members. */
export async function stageRoomUpdated(
  tx: Database,
  events: RoomEvents,
  accountId: string,
  roomId: string,
  updateType: 'name' | 'members' | 'roles',
): Promise<void> {
  await events.stage(tx, {
    event: 'room:updated',
    data: { room_id: roomId, update_type: updateType },
    recipients: await findMemberIds(tx, accountId, roomId),
  })
}

const directPair = (a: string, b: string) => (a < b ? `${a}:${b}` : `${b}:${a}`)

/**
 * Creates a room with the caller as its owner and the other identities as members. A direct room that
 * exists between the two already is returned instead (`created: false`), also to a concurrent request.
 */
export async function createRoom(
  deps: RoomEventDeps,
  caller: RoomCaller,
  body: CreateBody,
): Promise<{ room: Room; created: boolean }> {
  const { accountId, conversationId: me } = caller
  const others = [...new Set(body.conversation_ids)].filter((id) => id !== me)
  const name = body.room_name?.trim()
  if (body.type === 'direct' && others.length !== 1)
    throw new Invalid('conversation_ids must hold exactly one other member for a direct room')
  if (body.type === 'group' && !name) throw new Invalid('room_name is required for group rooms')
  await requireIdentities(deps.db, accountId, others)

  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { row, created } =
      body.type === 'direct'
        ? await insertOrFindDirectRoom(tx, accountId, {
            ownerId: me,
            directPair: directPair(me, others[0] as string),
          })
        : { row: await insertGroupRoom(tx, accountId, { ownerId: me, name: name as string }), created: true }
    if (created) {
      await insertMembers(tx, accountId, row, [
        { conversationId: me, role: 'owner' },
        ...others.map((conversationId) => ({ conversationId, role: 'member' as const })),
      ])
    }
    const room = await loadRoom(tx, accountId, row.id)
    if (created) {
      const recipients = room.members.map((member) => member.conversation_id)
      await events.stage(tx, { event: 'room:created', data: { room }, recipients })
    }
    return { room, created }
  })
}

/** Deletes a group room with its messages: its owner only. */
export function deleteRoom(deps: RoomEventDeps, caller: RoomCaller, roomId: string): Promise<void> {
  return inRoomTransaction(deps, caller.accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, roomId, { forUpdate: true })
    if (room.type === 'direct') throw new Invalid(CANNOT_DELETE_DIRECT)
    if (role !== 'owner') throw new Forbidden(ONLY_OWNER_CAN_DELETE)
    const recipients = await findMemberIds(tx, caller.accountId, room.id)
    await deleteRoomRow(tx, caller.accountId, room.id)
    await events.stage(tx, { event: 'room:deleted', data: { room_id: room.id }, recipients })
  })
}

/** Renames a group room (owner or admin), with a system message. */
export function renameRoom(
  deps: RoomEventDeps,
  caller: RoomCaller,
  body: { roomId: string; name: string },
): Promise<{ _id: string; name: string; updated_at: string }> {
  return inRoomTransaction(deps, caller.accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, body.roomId, { forUpdate: true })
    if (room.type === 'direct') throw new Invalid(CANNOT_RENAME_DIRECT)
    if (role === 'member') throw new Forbidden(ONLY_OWNER_OR_ADMIN_CAN_RENAME)
    const name = body.name.trim()
    if (!name) throw new Invalid('name must not be empty')
    const nameOf = await displayNames(tx, caller.accountId, [caller.conversationId])
    await postSystemMessage(
      tx,
      events,
      caller,
      room.id,
      `${nameOf(caller.conversationId)} renamed the room to "${name}"`,
    )
    const renamed = await updateRoom(tx, caller.accountId, room.id, { name })
    await stageRoomUpdated(tx, events, caller.accountId, room.id, 'name')
    return { _id: renamed.id, name, updated_at: iso(renamed.updatedAt) }
  })
}

/** Adds the room to the caller's favorites, or takes it out when it is there. */
export function toggleFavorite(
  db: Database,
  caller: RoomCaller,
  roomId: string,
): Promise<{ _id: string; name: string | null; is_favorite: boolean }> {
  return inTransaction(db, async (tx) => {
    const { room } = await requireRoomMember(tx, caller, roomId)
    const isFavorite = await toggleFavoriteFlag(tx, caller.accountId, room.id, caller.conversationId)
    return { _id: room.id, name: room.name, is_favorite: isFavorite }
  })
}

/** When a snooze asked for ends: a preset duration from `now`, or a custom time that must be ahead. */
export function snoozeEnd(body: SnoozeBody, now: Date): Date {
  if (body.time !== undefined && body.preset !== undefined) throw new Invalid('Give time or preset, not both')
  if (body.preset !== undefined) return new Date(now.getTime() + SNOOZE_PRESETS[body.preset] * 60_000)
  if (body.time === undefined) throw new Invalid('time or preset is required')
  if (body.time <= now.getTime()) throw new Invalid('time must be in the future')
  return new Date(body.time)
}

/** Snoozes the room for the caller: its notifications stop until then, its unread count still grows. */
export function snoozeRoom(
  db: Database,
  caller: RoomCaller,
  roomId: string,
  body: SnoozeBody,
): Promise<{ _id: string; snoozed_until: { conversation_id: string; time: number } }> {
  const until = snoozeEnd(body, new Date())
  return inTransaction(db, async (tx) => {
    const { room } = await requireRoomMember(tx, caller, roomId)
    await setSnoozedUntil(tx, caller.accountId, room.id, caller.conversationId, until)
    return { _id: room.id, snoozed_until: { conversation_id: caller.conversationId, time: until.getTime() } }
  })
}
