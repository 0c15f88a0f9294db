import type { Database } from '../../platform/db/connection.js'
import { Invalid } from '../../platform/http/errors.js'
import type { ClientEventHandler, Realtime } from '../../platform/realtime/gateway.js'
import { findMemberIds } from './membership.repository.js'
import { requireRoomMember } from './room-access.service.js'

/** What a client emits while its user types in a room; relayed to the room's other members, never stored. */
export const TYPING_EVENT = 'typing'

/**
 * The handler of `typing { room_id }`: the caller must be a member of the room (the gateway answers the
 * refusal, `Room does not exist` or `Cannot access this room`, in the emit's acknowledgement); the
 * other members receive `typing { room_id, conversation_id }`. The gateway limits how often a socket
 * may send it.
 */
export function relayTyping(db: Database, realtime: Pick<Realtime, 'toIdentities'>): ClientEventHandler {
  return async (caller, payload) => {
    const roomId = (payload as { room_id?: unknown } | null | undefined)?.room_id
    if (typeof roomId !== 'string') throw new Invalid('room_id is required')
    const typist = caller.conversation.id
    const { room } = await requireRoomMember(
      db,
      { accountId: caller.account_id, conversationId: typist },
      roomId,
    )
    const others = (await findMemberIds(db, caller.account_id, room.id)).filter((id) => id !== typist)
    realtime.toIdentities(others, TYPING_EVENT, { room_id: room.id, conversation_id: typist })
  }
}
