import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { Invalid, NotFound, Unauthorized } from '../../platform/http/errors.js'
import { findRoomAndRole, lockRoomAndRole, type RoomRow } from './room-access.repository.js'
import type { RoomRole } from './tables.js'

/** The spec's chat-room error messages, one place for every feature of the module. */
export const ROOM_DOES_NOT_EXIST = 'Room does not exist'
export const CANNOT_ACCESS_THIS_ROOM = 'Cannot access this room'

/** Who is calling a room endpoint: the account and the caller's chat identity (`conversation.id`). */
export interface RoomCaller {
  accountId: string
  conversationId: string
}

/** The caller of a room endpoint; a token without a chat identity (`conversation.id`) is a 401. */
export function roomCaller(auth: AuthContext): RoomCaller {
  const conversationId = auth.conversation?.id
  if (!conversationId) throw new Unauthorized('token lacks conversation.id')
  return { accountId: auth.account_id, conversationId }
}

export interface RoomAccess {
  room: RoomRow
  role: RoomRole
}

/**
 * The room as its member sees it: 404 `Room does not exist` for an unknown id or another account's
 * room (ids do not leak), 400 `Cannot access this room` when the caller is not a member. `forUpdate`
 * locks the room row for the caller's transaction, so concurrent membership changes queue behind it.
 */
export async function requireRoomMember(
  db: Database,
  caller: RoomCaller,
  roomId: string,
  options: { forUpdate?: boolean } = {},
): Promise<RoomAccess> {
  const lookUp = options.forUpdate ? lockRoomAndRole : findRoomAndRole
  const found = isId(roomId) ? await lookUp(db, caller.accountId, roomId, caller.conversationId) : undefined
  const { room, role } = asMember(found)
  return { room, role }
}

/** What was found of the room for a member, or the refusal for a room not found or a non-member. */
function asMember<T extends { role: RoomRole | undefined }>(found: T | undefined): T & { role: RoomRole } {
  if (!found) throw new NotFound(ROOM_DOES_NOT_EXIST)
  if (!found.role) throw new Invalid(CANNOT_ACCESS_THIS_ROOM)
  return found as T & { role: RoomRole }
}
