import { and, count, desc, eq, isNull, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type MessageRow, messageColumns } from './messages.repository.js'
import { type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface SearchRow {
  message: MessageRow
  roomName: string | null
  roomType: RoomType
}

/**
 * Full-text search over the messages (not deleted) of the rooms the identity is a current member of:
 * the indexed `search_vector` against `websearch_to_tsquery('simple', text)`, ranked by `ts_rank`, then
 * newest first; with the total number of hits.
 */
export async function searchMessages(
  db: Database,
  accountId: string,
  conversationId: string,
  search: { text: string; offset: number; limit: number },
): Promise<{ rows: SearchRow[]; total: number }> {
  const query = sql`websearch_to_tsquery('simple', ${search.text})`
  const membership = and(
    eq(roomMembers.accountId, accountId),
    eq(roomMembers.roomId, roomMessages.roomId),
    eq(roomMembers.conversationId, conversationId),
  )
  const matching = and(
    eq(roomMessages.accountId, accountId),
    isNull(roomMessages.deletedAt),
    sql`${roomMessages.searchVector} @@ ${query}`,
  )
  const rank: SQL<number> = sql`ts_rank(${roomMessages.searchVector}, ${query})`
  // The total rides along on every row of the page (one scan of the hits); a page past the last has no
  // row to carry it, and counts apart.
  const page = await db
    .select({
      message: messageColumns,
      roomName: rooms.name,
      roomType: rooms.type,
      total: sql<number>`count(*) over ()`.mapWith(Number),
    })
    .from(roomMessages)
    .innerJoin(roomMembers, membership)
    .innerJoin(rooms, and(eq(rooms.accountId, accountId), eq(rooms.id, roomMessages.roomId)))
    .where(matching)
    .orderBy(desc(rank), desc(roomMessages.createdAt), desc(roomMessages.id))
    .limit(search.limit)
    .offset(search.offset)
  const total =
    page[0]?.total ??
    (search.offset > 0
      ? (
          await db
            .select({ total: count() })
            .from(roomMessages)
            .innerJoin(roomMembers, membership)
            .where(matching)
        )[0]?.total
      : 0)
  return { rows: page, total: total ?? 0 }
}
