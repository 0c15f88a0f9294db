import { and, count, desc, eq, isNull, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type MessageRow, messageColumns } from './messages.repository.js'
import { type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface SearchRow {
  message: MessageRow
  roomName: string | null
  roomType: RoomType
}

/** Who searches for what. */
interface Search {
  accountId: string
  conversationId: string
  text: string
}

/**
 * The search's words as the account's own (`room_search_query`: websearch_to_tsquery('simple'), each lexeme
 * behind the account's prefix, as `search_vector` holds them). A scalar subquery: computed once per search
 * (an InitPlan), where the function call itself would run again for every hit.
 */
const queryOf = (search: Pick<Search, 'accountId' | 'text'>) =>
  sql`(select room_search_query(${search.accountId}::text, ${search.text}::text))`

/**
 * The account's messages (not deleted) that match, in the rooms the identity is a member of now. The
 * matches come from the GIN index of the account's own words (`room_messages_account_keyed_search`), the
 * only relation of the query (`account_id` is still compared: two accounts may share a prefix). The
 * membership is a lookup per hit on the member's key, which OFFSET 0 keeps a subquery, and the room's name
 * and type are read for the page's rows only. Joined instead, PostgreSQL estimated a few rooms
 * for the largest account's member of 399 and probed the index once per room (docs/decisions.md, issue 31).
 */
const matchingOf = (search: Search) =>
  and(
    eq(roomMessages.accountId, search.accountId),
    isNull(roomMessages.deletedAt),
    sql`${roomMessages.searchVector} @@ ${queryOf(search)}`,
    sql`exists (select 1 from ${roomMembers} where ${roomMembers.accountId} = ${search.accountId}
      and ${roomMembers.roomId} = ${roomMessages.roomId} and ${roomMembers.conversationId} = ${search.conversationId}
      offset 0)`,
  )
const roomColumn = <T>(column: SQL, accountId: string) =>
  sql<T>`(select ${column} from ${rooms} where ${rooms.accountId} = ${accountId} and ${rooms.id} = ${roomMessages.roomId})`

/**
 * Full-text search over the messages (not deleted) of the rooms the identity is a current member of: the
 * indexed `search_vector` against `websearch_to_tsquery('simple', text)`, ranked by `ts_rank`, then newest
 * first; with the total number of hits. Not a named prepared statement: a generic plan, blind to how many
 * rooms a member has, walked every hit once per room (0.45 s against 5 ms for the largest account).
 */
export async function searchMessages(
  db: Database,
  accountId: string,
  conversationId: string,
  search: { text: string; offset: number; limit: number },
): Promise<{ rows: SearchRow[]; total: number }> {
  const matching = matchingOf({ accountId, conversationId, text: search.text })
  const rank = sql`ts_rank(${roomMessages.searchVector}, ${queryOf({ accountId, text: search.text })})`
  // The total rides along on every row of the page (one scan of the hits); a page past the last has no
  // row to carry it, and counts apart.
  const page = await db
    .select({
      message: messageColumns,
      roomName: roomColumn<string | null>(sql`${rooms.name}`, accountId),
      roomType: roomColumn<RoomType>(sql`${rooms.type}`, accountId),
      total: sql<number>`count(*) over ()`.mapWith(Number),
    })
    .from(roomMessages)
    .where(matching)
    .orderBy(desc(rank), desc(roomMessages.createdAt), desc(roomMessages.id))
    .limit(search.limit)
    .offset(search.offset)
  const counted = async () => (await db.select({ total: count() }).from(roomMessages).where(matching))[0]
  const total = page[0]?.total ?? (search.offset > 0 ? (await counted())?.total : 0)
  return { rows: page, total: total ?? 0 }
}
