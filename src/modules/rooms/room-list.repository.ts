import { and, count, desc, eq, exists, gt, ilike, inArray, ne, or, type SQL, sql } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { Database } from '../../platform/db/connection.js'
import { containsPattern } from '../../platform/db/search.js'
import { unreadCount } from './messages.repository.js'
import type { RoomListStatus } from './room-list.schemas.js'
import { type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface RoomListFilter {
  status: RoomListStatus
  type?: RoomType
  /** Matched against room names (`search`) and members' names (`memberIds`: whose name matched). */
  search?: { text: string; memberIds: string[] }
}

const otherMembers = alias(roomMembers, 'other_members')
const lastMessage = and(
  eq(roomMessages.accountId, rooms.accountId),
  eq(roomMessages.id, rooms.lastMessageId),
  sql`${roomMessages.deletedAt} is null`,
)

function conditions(db: Database, accountId: string, conversationId: string, filter: RoomListFilter): SQL[] {
  const where = [
    eq(roomMembers.accountId, accountId),
    eq(roomMembers.conversationId, conversationId),
    eq(rooms.accountId, accountId),
  ]
  if (filter.type) where.push(eq(rooms.type, filter.type))
  if (filter.status === 'unread') where.push(sql`${unreadCount} > 0`)
  if (filter.status === 'favorites') where.push(eq(roomMembers.isFavorite, true))
  if (filter.status === 'snoozed') where.push(gt(roomMembers.snoozedUntil, sql`now()`))
  if (filter.search) where.push(matching(db, accountId, conversationId, filter.search) as SQL)
  return where
}

/** A room named like the text, or with another member whose name matched. */
function matching(
  db: Database,
  accountId: string,
  conversationId: string,
  search: NonNullable<RoomListFilter['search']>,
) {
  const named = ilike(rooms.name, containsPattern(search.text))
  if (search.memberIds.length === 0) return named
  const withMember = exists(
    db
      .select({ one: sql`1` })
      .from(otherMembers)
      .where(
        and(
          eq(otherMembers.accountId, accountId),
          eq(otherMembers.roomId, rooms.id),
          ne(otherMembers.conversationId, conversationId),
          inArray(otherMembers.conversationId, search.memberIds),
        ),
      ),
  )
  return or(named, withMember)
}

function selectRooms(db: Database, where: SQL | undefined) {
  return db
    .select({
      room: rooms,
      isFavorite: roomMembers.isFavorite,
      snoozedUntil: roomMembers.snoozedUntil,
      unreadCount,
      lastMessage: {
        content: roomMessages.content,
        createdAt: roomMessages.createdAt,
        senderId: roomMessages.senderId,
      },
    })
    .from(roomMembers)
    .innerJoin(rooms, eq(rooms.id, roomMembers.roomId))
    .leftJoin(roomMessages, lastMessage)
    .where(where)
    .orderBy(desc(rooms.lastActivity), desc(rooms.id))
}

export type RoomListRow = Awaited<ReturnType<typeof selectRooms>>[number]

/**
 * A page of the rooms the identity is a member of, most recent activity first, each with the member's
 * own state (favorite, snooze, unread count) and the room's last message: one query for the page
 * whatever it holds, one for the total.
 */
export async function listRoomsOfMember(
  db: Database,
  accountId: string,
  conversationId: string,
  filter: RoomListFilter,
  window: { offset: number; limit: number },
): Promise<{ rows: RoomListRow[]; total: number }> {
  const where = and(...conditions(db, accountId, conversationId, filter))
  const [rows, [totals]] = await Promise.all([
    selectRooms(db, where).limit(window.limit).offset(window.offset),
    db
      .select({ total: count() })
      .from(roomMembers)
      .innerJoin(rooms, eq(rooms.id, roomMembers.roomId))
      .where(where),
  ])
  return { rows, total: totals?.total ?? 0 }
}

/** Every room of the identity that the filter keeps (the favorites), most recent activity first. */
export function listAllRoomsOfMember(
  db: Database,
  accountId: string,
  conversationId: string,
  filter: RoomListFilter,
): Promise<RoomListRow[]> {
  return selectRooms(db, and(...conditions(db, accountId, conversationId, filter)))
}
