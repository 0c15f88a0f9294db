import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { pageOffset, pagination } from '../../platform/http/pagination.js'
import { findChatIdentities, findChatIdentitiesNamed } from '../accounts/chat-identities.service.js'
import type { RoomCaller } from './room-access.service.js'
import {
  listAllRoomsOfMember,
  listRoomsOfMember,
  type RoomListFilter,
  type RoomListRow,
} from './room-list.repository.js'
import type { ListedMember, ListQuery, RoomListItem } from './room-list.schemas.js'
import { lastMessageView } from './rooms.service.js'

/** The list's filter; a search also looks for members whose name matches (the caller's own name aside). */
async function listFilter(db: Database, caller: RoomCaller, query: ListQuery): Promise<RoomListFilter> {
  const text = query.search?.trim()
  const search = text
    ? { text, memberIds: await findChatIdentitiesNamed(db, caller.accountId, text) }
    : undefined
  return { status: query.status, type: query.type, search }
}

/** The listed rooms' members with their users, by room: one query for the whole page. */
async function listedMembers(
  db: Database,
  accountId: string,
  rows: RoomListRow[],
): Promise<Map<string, ListedMember[]>> {
  const identities = await findChatIdentities(
    db,
    accountId,
    rows.flatMap((row) => row.members.map((member) => member.conversation_id)),
  )
  return new Map(
    rows.map((row) => [
      row.room.id,
      row.members.map(({ conversation_id, role }) => ({
        conversation_id,
        user: identities.get(conversation_id)?.user ?? null,
        role,
      })),
    ]),
  )
}

const listItem = (row: RoomListRow, members: ListedMember[]): RoomListItem => ({
  _id: row.room.id,
  type: row.room.type,
  name: row.room.name,
  owner: row.room.ownerId,
  members,
  last_message: lastMessageView(row.lastMessage),
  last_activity: row.room.lastActivity.toISOString(),
  unread_count: row.unreadCount,
  is_favorite: row.isFavorite,
  snoozed_until: row.snoozedUntil && row.snoozedUntil > new Date() ? row.snoozedUntil.getTime() : null,
  created_at: row.room.createdAt.toISOString(),
  updated_at: row.room.updatedAt.toISOString(),
})

/** The caller's rooms, most recent activity first, filtered by status, type and search, one page. */
export async function listRooms(
  db: Database,
  caller: RoomCaller,
  query: ListQuery,
): Promise<{ rooms: RoomListItem[]; pagination: Pagination }> {
  const filter = await listFilter(db, caller, query)
  const { rows, total } = await listRoomsOfMember(db, caller.accountId, caller.conversationId, filter, {
    offset: pageOffset(query.page, query.limit),
    limit: query.limit,
  })
  const members = await listedMembers(db, caller.accountId, rows)
  return {
    rooms: rows.map((row) => listItem(row, members.get(row.room.id) ?? [])),
    pagination: pagination(total, query.page, query.limit),
  }
}

/** The caller's favorite rooms, most recent activity first. */
export async function listFavorites(db: Database, caller: RoomCaller) {
  const rows = await listAllRoomsOfMember(db, caller.accountId, caller.conversationId, {
    status: 'favorites',
  })
  return rows.map((row) => ({
    _id: row.room.id,
    name: row.room.name,
    type: row.room.type,
    last_message: lastMessageView(row.lastMessage),
    unread_count: row.unreadCount,
  }))
}
