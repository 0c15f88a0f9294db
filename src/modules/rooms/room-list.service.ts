import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { pageWindow, pagination } from '../../platform/http/pagination.js'
import { findChatIdentities, findChatIdentitiesNamed } from '../accounts/chat-identities.service.js'
import type { RoomCaller } from './room-access.service.js'
import {
  listAllRoomsOfMember,
  listRoomsOfMember,
  type RoomListFilter,
  type RoomListRow,
} from './room-list.repository.js'
import type { ListedMember, ListQuery, RoomListItem } from './room-list.schemas.js'

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
      row.id,
      row.members.map(({ conversation_id, role }) => ({
        conversation_id,
        user: identities.get(conversation_id)?.user ?? null,
        role,
      })),
    ]),
  )
}

const lastMessage = (row: RoomListRow): RoomListItem['last_message'] =>
  row.last_message_created_at === null
    ? null
    : {
        content: row.last_message_content as string,
        created_at: row.last_message_created_at,
        sender_id: row.last_message_sender_id as string,
      }

/** Snoozed until a time still to come (Unix milliseconds), else null. */
function snoozedUntil(row: RoomListRow): number | null {
  const until = row.snoozed_until === null ? null : Date.parse(row.snoozed_until)
  return until !== null && until > Date.now() ? until : null
}

const listItem = (row: RoomListRow, members: ListedMember[]): RoomListItem => ({
  _id: row.id,
  type: row.type,
  name: row.name,
  owner: row.owner_id,
  members,
  last_message: lastMessage(row),
  last_activity: row.last_activity,
  unread_count: row.unread_count,
  is_favorite: row.is_favorite,
  snoozed_until: snoozedUntil(row),
  created_at: row.created_at,
  updated_at: row.updated_at,
})

/** The caller's rooms, most recent activity first, filtered by status, type and search, one page. */
export async function listRooms(
  db: Database,
  caller: RoomCaller,
  query: ListQuery,
): Promise<{ rooms: RoomListItem[]; pagination: Pagination }> {
  const filter = await listFilter(db, caller, query)
  const { rows, total } = await listRoomsOfMember(
    db,
    caller.accountId,
    caller.conversationId,
    filter,
    pageWindow(query),
  )
  const members = await listedMembers(db, caller.accountId, rows)
  return {
    rooms: rows.map((row) => listItem(row, members.get(row.id) ?? [])),
    pagination: pagination(total, query.page, query.limit),
  }
}

/** The caller's favorite rooms, most recent activity first. */
export async function listFavorites(db: Database, caller: RoomCaller) {
  const rows = await listAllRoomsOfMember(db, caller.accountId, caller.conversationId, {
    status: 'favorites',
  })
  return rows.map((row) => ({
    _id: row.id,
    name: row.name,
    type: row.type,
    last_message: lastMessage(row),
    unread_count: row.unread_count,
  }))
}
