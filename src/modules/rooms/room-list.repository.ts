import { type SQL, sql } from 'drizzle-orm'
import { isoTimestamp } from '../../platform/db/columns.js'
import type { Database } from '../../platform/db/connection.js'
import { countUpToCapSql } from '../../platform/db/page.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { containsPattern } from '../../platform/db/search.js'
import { unreadCount } from './messages.repository.js'
import type { RoomListStatus } from './room-list.schemas.js'
import { type RoomRole, type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface RoomListFilter {
  status: RoomListStatus
  type?: RoomType
  /** Matched against room names (`search`) and members' names (`memberIds`: whose name matched). */
  search?: { text: string; memberIds: string[] }
}

/** A listed room as PostgreSQL answers it: its column names, timestamps in ISO 8601 but `snoozed_until`. */
export interface RoomListRow {
  id: string
  type: RoomType
  name: string | null
  owner_id: string
  last_activity: string
  created_at: string
  updated_at: string
  is_favorite: boolean
  /** As PostgreSQL writes a timestamp. */
  snoozed_until: string | null
  unread_count: number
  last_message_content: string | null
  last_message_created_at: string | null
  last_message_sender_id: string | null
  /** The room's current members, oldest first. */
  members: { conversation_id: string; role: RoomRole }[]
}

const value = (name: string) => sql.placeholder(name)

/**
 * The list's conditions with placeholders for every value (`$accountId`, `$conversationId`, `$type`,
 * `$pattern`, `$memberIds`), so that each shape of filter is one statement, prepared once: those on the
 * identity's memberships, and those on their rooms.
 */
function memberConditions(filter: RoomListFilter): SQL[] {
  const where = [
    sql`${roomMembers.accountId} = ${value('accountId')}`,
    sql`${roomMembers.conversationId} = ${value('conversationId')}`,
  ]
  if (filter.status === 'favorites') where.push(sql`${roomMembers.isFavorite}`)
  if (filter.status === 'snoozed') where.push(sql`${roomMembers.snoozedUntil} > now()`)
  return where
}

function roomConditions(filter: RoomListFilter): SQL[] {
  const where = [sql`${rooms.accountId} = ${value('accountId')}`]
  if (filter.type) where.push(sql`${rooms.type} = ${value('type')}`)
  if (filter.status === 'unread') where.push(sql`${unreadCount} > 0`)
  if (filter.search) where.push(matching(filter.search.memberIds.length > 0))
  return where
}

const allOf = (conditions: SQL[]) => sql.join(conditions, sql` and `)

/** A room named like the text, or (`byMember`) with another member whose name matched. */
function matching(byMember: boolean): SQL {
  const named = sql`${rooms.name} ilike ${value('pattern')}`
  if (!byMember) return named
  return sql`(${named} or exists (
    select 1 from ${roomMembers} other
    where other.account_id = ${value('accountId')} and other.room_id = ${rooms.id}
      and other.conversation_id <> ${value('conversationId')}
      and other.conversation_id = any(${value('memberIds')}::text[])
  ))`
}

/** The values of the filter's placeholders. */
function filterValues(accountId: string, conversationId: string, filter: RoomListFilter) {
  return {
    accountId,
    conversationId,
    type: filter.type,
    pattern: filter.search && containsPattern(filter.search.text),
    memberIds: filter.search?.memberIds,
  }
}

/** The name of a filter's shape: the statements of one shape are the same text. */
const shapeOf = (filter: RoomListFilter) =>
  `${filter.status}_${filter.type ?? 'any'}_${filter.search ? (filter.search.memberIds.length > 0 ? 'members' : 'named') : 'all'}`

/** Whether the filter reads only the identity's memberships (which hold their room's account). */
const onMembershipsAlone = (filter: RoomListFilter) =>
  !filter.type && !filter.search && filter.status !== 'unread'

/** The room's current members, oldest first, as `[{ conversation_id, role }]` (JSON). */
const roomMemberList = sql`(
  select coalesce(json_agg(json_build_object('conversation_id', m.conversation_id, 'role', m.role)
    order by m.joined_at, m.conversation_id), '[]')
  from ${roomMembers} m where m.account_id = ${rooms.accountId} and m.room_id = ${rooms.id}
)`

/**
 * The identity's memberships the filter keeps: conditions on the membership, and on its room (if any) as a
 * lookup of the room per membership.
 */
function keptMemberships(filter: RoomListFilter): SQL {
  const onRoom = onMembershipsAlone(filter)
    ? []
    : [
        sql`exists (select 1 from ${rooms} where ${rooms.accountId} = ${roomMembers.accountId}
          and ${rooms.id} = ${roomMembers.roomId} and ${allOf(roomConditions(filter))})`,
      ]
  return allOf([...memberConditions(filter), ...onRoom])
}

/** The rooms the filter keeps, up to the cap of a list's total; an index-only count without a room filter. */
const countOf = (filter: RoomListFilter) =>
  countUpToCapSql(sql`select 1 from ${roomMembers} where ${keptMemberships(filter)}`)

/** The list's order: most recent activity first, along the member's index. */
const inListOrder = sql`${roomMembers.lastActivity} desc, ${roomMembers.roomId} desc`

/**
 * The identity's memberships the filter keeps, most recent activity first (`window`: the page of them): a
 * walk of the member's own index (`room_members_account_identity_activity`) that stops at the page's end,
 * however many rooms the member is in.
 */
const membershipsInOrder = (filter: RoomListFilter, window: SQL) => sql`
  select ${roomMembers}.* from ${roomMembers} where ${keptMemberships(filter)} order by ${inListOrder} ${window}`

/**
 * The identity's rooms the filter keeps, with the member's state, the room's last message and its members,
 * most recent activity first, read for the window's memberships only. The page of memberships takes the
 * table's name, so that the columns of the member's state read from it.
 */
const selectRooms = (filter: RoomListFilter, window: SQL, extra: SQL = sql``) => sql`
  select ${rooms.id} as id, ${rooms.type} as type, ${rooms.name} as name, ${rooms.ownerId} as owner_id,
    ${isoTimestamp(rooms.lastActivity)} as last_activity, ${isoTimestamp(rooms.createdAt)} as created_at,
    ${isoTimestamp(rooms.updatedAt)} as updated_at,
    ${roomMembers.isFavorite} as is_favorite, ${roomMembers.snoozedUntil} as snoozed_until,
    ${unreadCount} as unread_count,
    ${roomMessages.content} as last_message_content,
    ${isoTimestamp(roomMessages.createdAt)} as last_message_created_at,
    ${roomMessages.senderId} as last_message_sender_id,
    ${roomMemberList} as members${extra}
  from (${membershipsInOrder(filter, window)}) as ${roomMembers}
  join ${rooms} on ${rooms.accountId} = ${roomMembers.accountId} and ${rooms.id} = ${roomMembers.roomId}
  left join ${roomMessages} on ${roomMessages.accountId} = ${rooms.accountId}
    and ${roomMessages.id} = ${rooms.lastMessageId} and ${roomMessages.deletedAt} is null
  order by ${inListOrder}`

/** One statement per shape of filter, named after it and built on first use. */
function statementByShape<Row>(name: string, build: (filter: RoomListFilter) => SQL) {
  const byShape = new Map<string, ReturnType<typeof preparedStatement<Row>>>()
  return (filter: RoomListFilter) => {
    const shape = shapeOf(filter)
    let statement = byShape.get(shape)
    if (!statement) {
      statement = preparedStatement<Row>(`${name}_${shape}`, build(filter))
      byShape.set(shape, statement)
    }
    return statement
  }
}

/**
 * The page's bounds as sub-selects, which PostgreSQL cannot read while planning: it then costs the statement
 * alike with or without the values and, after its first five runs, keeps one generic plan instead of
 * planning every call (0.35–0.6 ms of the 0.9 ms a list cost the database).
 */
const pageStatement = statementByShape<RoomListRow & { total: number }>('room_list_page', (filter) =>
  selectRooms(
    filter,
    sql`limit (select ${value('limit')}::int) offset (select ${value('offset')}::int)`,
    sql`, (${countOf(filter)}) as total`,
  ),
)

const countStatement = statementByShape<{ total: number }>('room_list_count', countOf)

const everyRoomStatement = statementByShape<RoomListRow>('room_list_every', (filter) =>
  selectRooms(filter, sql``),
)

/**
 * A page of the rooms the identity is a member of, most recent activity first, each with the member's
 * own state (favorite, snooze, unread count), the room's last message and its members, and the total on
 * every row: one statement whatever the page holds, prepared once per shape of filter. Only a page past
 * the end counts apart.
 */
export async function listRoomsOfMember(
  db: Database,
  accountId: string,
  conversationId: string,
  filter: RoomListFilter,
  window: { offset: number; limit: number },
): Promise<{ rows: RoomListRow[]; total: number }> {
  const values = filterValues(accountId, conversationId, filter)
  const rows = await pageStatement(filter)(db, { ...values, ...window })
  if (rows.length > 0) return { rows, total: rows[0]?.total ?? 0 }
  if (window.offset === 0) return { rows, total: 0 }
  const [counted] = await countStatement(filter)(db, values)
  return { rows, total: counted?.total ?? 0 }
}

/** Every room of the identity that the filter keeps (the favorites), most recent activity first. */
export function listAllRoomsOfMember(
  db: Database,
  accountId: string,
  conversationId: string,
  filter: RoomListFilter,
): Promise<RoomListRow[]> {
  return everyRoomStatement(filter)(db, filterValues(accountId, conversationId, filter))
}
