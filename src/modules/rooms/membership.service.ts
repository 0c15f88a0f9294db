import type { Database } from '../../platform/db/connection.js'
import { Forbidden, Invalid } from '../../platform/http/errors.js'
import {
  deleteMember,
  findFirstJoinedWithRole,
  findMemberIds,
  insertMembers,
  markRead,
  setRole,
} from './membership.repository.js'
import { findMemberRole } from './room-access.repository.js'
import { type RoomCaller, requireRoomMember } from './room-access.service.js'
import { inRoomTransaction, type RoomEventDeps, type RoomEvents } from './room-events.js'
import { deleteRoomRow, updateRoom } from './rooms.repository.js'
import type { Room } from './rooms.schemas.js'
import {
  displayNames,
  loadRoom,
  postSystemMessage,
  requireIdentities,
  stageRoomUpdated,
} from './rooms.service.js'

export const CANNOT_LEAVE_DIRECT = 'Cannot leave direct message'
export const CANNOT_ADD_TO_DIRECT = 'Cannot add members to direct message'
export const CANNOT_REMOVE_FROM_DIRECT = 'Cannot remove a member from direct message'
export const ONLY_ADMINS_CAN_ADD = 'Only admins can add members'
export const ONLY_OWNER_CAN_TRANSFER = 'Only room owner can change the owner'
export const ONLY_OWNER_OR_ADMIN_CAN_CHANGE_ROLES = 'Only room owner or admin can change roles'
export const ONLY_OWNER_OR_ADMIN_CAN_REMOVE = 'Only room owner or admin can remove a user from rooms'
export const OWNER_ROLE_UNCHANGEABLE = "The owner's role cannot be changed; transfer the ownership instead"
export const OWNER_NOT_REMOVABLE = 'The room owner cannot be removed'

/** The spec's refusal to let a plain member remove someone, answered with its own `{ error, statusCode }` body. */
export class RemovalRefused extends Forbidden {
  constructor() {
    super(ONLY_OWNER_OR_ADMIN_CAN_REMOVE)
  }
}

export const notAMember = (id: string) => `${id} is not a member of this room`

const roleNames = { admin: 'an admin', member: 'a member' } as const

/**
 * The spec's "Room ownership" when the owner leaves, row by row of its state table: another admin exists,
 * first admin becomes owner; no admin but another member exists, oldest member becomes owner; no other
 * member, room deleted (no successor). "First" and "oldest" are by joining (the earliest `joined_at`).
 */
async function ownerSuccessor(tx: Database, accountId: string, roomId: string): Promise<string | undefined> {
  const firstAdmin = await findFirstJoinedWithRole(tx, accountId, roomId, 'admin')
  return firstAdmin ?? findFirstJoinedWithRole(tx, accountId, roomId, 'member')
}

/**
 * The events of a member gone from the room (it left, or was removed): `room:member_removed` for the
 * remaining members and the one gone (its own client drops the room), then `room:updated` (`members`).
 */
async function stageMemberRemoved(
  tx: Database,
  events: RoomEvents,
  accountId: string,
  roomId: string,
  gone: string,
): Promise<void> {
  const members = await findMemberIds(tx, accountId, roomId)
  await events.stage(tx, {
    event: 'room:member_removed',
    data: { room_id: roomId, conversation_id: gone },
    recipients: [...members, gone],
  })
  await stageRoomUpdated(tx, events, accountId, roomId, 'members')
}

/**
 * The caller leaves a group room; an owner who leaves hands the room to its `ownerSuccessor`, and the
 * last one out deletes the room. The room row stays locked throughout, so concurrent departures keep
 * exactly one owner.
 */
export function leaveRoom(
  deps: RoomEventDeps,
  caller: RoomCaller,
  roomId: string,
): Promise<{ _id: string; name: string | null; members: Room['members'] }> {
  const { accountId, conversationId: me } = caller
  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, roomId, { forUpdate: true })
    if (room.type === 'direct') throw new Invalid(CANNOT_LEAVE_DIRECT)
    await deleteMember(tx, accountId, room.id, me)
    const successor = role === 'owner' ? await ownerSuccessor(tx, accountId, room.id) : undefined
    if (role === 'owner' && !successor) {
      await deleteRoomRow(tx, accountId, room.id)
      await events.stage(tx, { event: 'room:deleted', data: { room_id: room.id }, recipients: [me] })
      return { _id: room.id, name: room.name, members: [] }
    }
    const nameOf = await displayNames(tx, accountId, successor ? [me, successor] : [me])
    await postSystemMessage(tx, events, caller, room.id, `${nameOf(me)} left the room`)
    if (successor) {
      await setRole(tx, accountId, room.id, successor, 'owner')
      await updateRoom(tx, accountId, room.id, { ownerId: successor })
      await postSystemMessage(tx, events, caller, room.id, `${nameOf(successor)} is now the owner`)
      await stageRoomUpdated(tx, events, accountId, room.id, 'roles')
    }
    await stageMemberRemoved(tx, events, accountId, room.id, me)
    const view = await loadRoom(tx, accountId, room.id)
    return { _id: view._id, name: view.name, members: view.members }
  })
}

/**
 * Adds identities of the caller's account to a group room (owner or admin) as members. Those already
 * members are ignored; when none is new nothing changes, with no system message.
 */
export function addMembers(
  deps: RoomEventDeps,
  caller: RoomCaller,
  body: { roomId: string; conversation_ids: string[] },
): Promise<Room> {
  const { accountId, conversationId: me } = caller
  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, body.roomId, { forUpdate: true })
    if (room.type === 'direct') throw new Invalid(CANNOT_ADD_TO_DIRECT)
    if (role === 'member') throw new Forbidden(ONLY_ADMINS_CAN_ADD)
    const ids = [...new Set(body.conversation_ids)]
    const identities = await requireIdentities(tx, accountId, ids)
    const added = await insertMembers(
      tx,
      accountId,
      room,
      ids.map((conversationId) => ({ conversationId, role: 'member' as const })),
    )
    if (added.length > 0) {
      const nameOf = await displayNames(tx, accountId, [me])
      const names = added.map((id) => identities.get(id)?.user.name || id).join(', ')
      const message = await postSystemMessage(tx, events, caller, room.id, `${nameOf(me)} added ${names}`)
      await markRead(tx, accountId, room.id, added, message)
      const recipients = await findMemberIds(tx, accountId, room.id)
      for (const id of added) {
        const member = { conversation_id: id, user: identities.get(id)?.user ?? null, role: 'member' }
        await events.stage(tx, { event: 'room:member_added', data: { room_id: room.id, member }, recipients })
      }
      await stageRoomUpdated(tx, events, accountId, room.id, 'members')
    }
    return loadRoom(tx, accountId, room.id)
  })
}

/** The role of the target member, or a 400 when it is not one. */
async function requireTarget(tx: Database, caller: RoomCaller, roomId: string, target: string) {
  const role = await findMemberRole(tx, caller.accountId, roomId, target)
  if (!role) throw new Invalid(notAMember(target))
  return role
}

/** The owner hands the room to another member, becoming a plain member. */
export function transferOwnership(
  deps: RoomEventDeps,
  caller: RoomCaller,
  body: { roomId: string; conversationId: string },
): Promise<void> {
  const { accountId, conversationId: me } = caller
  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, body.roomId, { forUpdate: true })
    if (role !== 'owner') throw new Forbidden(ONLY_OWNER_CAN_TRANSFER)
    const target = body.conversationId
    await requireTarget(tx, caller, room.id, target)
    if (target === me) return
    await setRole(tx, accountId, room.id, me, 'member')
    await setRole(tx, accountId, room.id, target, 'owner')
    await updateRoom(tx, accountId, room.id, { ownerId: target })
    const nameOf = await displayNames(tx, accountId, [me, target])
    await postSystemMessage(tx, events, caller, room.id, `${nameOf(me)} made ${nameOf(target)} the owner`)
    await stageRoomUpdated(tx, events, accountId, room.id, 'roles')
  })
}

/** The owner or an admin makes a member an admin or a plain member; the owner's role is not changed so. */
export function changeRole(
  deps: RoomEventDeps,
  caller: RoomCaller,
  body: { roomId: string; conversationId: string; role: 'admin' | 'member' },
): Promise<void> {
  const { accountId, conversationId: me } = caller
  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, body.roomId, { forUpdate: true })
    if (role === 'member') throw new Forbidden(ONLY_OWNER_OR_ADMIN_CAN_CHANGE_ROLES)
    const target = body.conversationId
    const targetRole = await requireTarget(tx, caller, room.id, target)
    if (targetRole === 'owner') throw new Invalid(OWNER_ROLE_UNCHANGEABLE)
    if (targetRole === body.role) return
    await setRole(tx, accountId, room.id, target, body.role)
    const nameOf = await displayNames(tx, accountId, [me, target])
    await postSystemMessage(
      tx,
      events,
      caller,
      room.id,
      `${nameOf(me)} made ${nameOf(target)} ${roleNames[body.role]}`,
    )
    await stageRoomUpdated(tx, events, accountId, room.id, 'roles')
  })
}

/** The owner or an admin removes a member from a group room; never the owner. */
export function removeMember(
  deps: RoomEventDeps,
  caller: RoomCaller,
  roomId: string,
  target: string,
): Promise<Room> {
  const { accountId, conversationId: me } = caller
  return inRoomTransaction(deps, accountId, async (tx, events) => {
    const { room, role } = await requireRoomMember(tx, caller, roomId, { forUpdate: true })
    if (room.type === 'direct') throw new Invalid(CANNOT_REMOVE_FROM_DIRECT)
    if (role === 'member') throw new RemovalRefused()
    const targetRole = await requireTarget(tx, caller, room.id, target)
    if (targetRole === 'owner') throw new Invalid(OWNER_NOT_REMOVABLE)
    await deleteMember(tx, accountId, room.id, target)
    const nameOf = await displayNames(tx, accountId, [me, target])
    await postSystemMessage(tx, events, caller, room.id, `${nameOf(me)} removed ${nameOf(target)}`)
    await stageMemberRemoved(tx, events, accountId, room.id, target)
    return loadRoom(tx, accountId, room.id)
  })
}
