import { and, count, desc, eq, isNull, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedOnce } from '../../platform/db/prepared.js'
import { type MessageRow, messageColumns } from './messages.repository.js'
import { type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface SearchRow {
  message: MessageRow
  roomName: string | null
  roomType: RoomType
}

const value = (name: string) => sql.placeholder(name)
// A scalar subquery: computed once per search (an InitPlan) also in the prepared statement's generic plan,
// where the function call itself would run again for every hit.
const query = sql`(select websearch_to_tsquery('simple', ${value('text')}::text))`
const matching = and(
  eq(roomMessages.accountId, value('accountId')),
  isNull(roomMessages.deletedAt),
  sql`${roomMessages.searchVector} @@ ${query}`,
)

/**
 * The account's messages matching the words, read first through the account-led GIN index
 * (`room_messages_account_search`), then joined to the caller's rooms. OFFSET 0 keeps PostgreSQL from
 * merging this subquery into the join: merged, it estimated a few rooms and probed the index once per room
 * of the caller, 399 probes for the largest account (docs/decisions.md, issue 31 search).
 */
const hitsOf = (db: Database) =>
  db
    .select({ ...messageColumns, searchVector: roomMessages.searchVector })
    .from(roomMessages)
    .where(matching)
    .offset(0)
    .as('hits')
type Hits = ReturnType<typeof hitsOf>

const messageOf = (hits: Hits) =>
  Object.fromEntries(Object.keys(messageColumns).map((key) => [key, hits[key as keyof Hits]])) as {
    [K in keyof typeof messageColumns]: Hits[K]
  }
const membershipOf = (hits: Hits) =>
  and(
    eq(roomMembers.accountId, value('accountId')),
    eq(roomMembers.roomId, hits.roomId),
    eq(roomMembers.conversationId, value('conversationId')),
  )
const rankOf = (hits: Hits): SQL<number> => sql`ts_rank(${hits.searchVector}, ${query})`

// The total rides along on every row of the page (one scan of the hits); a page past the last has no
// row to carry it, and counts apart. Both prepared once per connection, which saves planning the join
// (a quarter of a search's time in the database).
const pageQuery = preparedOnce((db) => {
  const hits = hitsOf(db)
  return db
    .select({
      message: messageOf(hits),
      roomName: rooms.name,
      roomType: rooms.type,
      total: sql<number>`count(*) over ()`.mapWith(Number),
    })
    .from(hits)
    .innerJoin(roomMembers, membershipOf(hits))
    .innerJoin(rooms, and(eq(rooms.accountId, value('accountId')), eq(rooms.id, hits.roomId)))
    .orderBy(desc(rankOf(hits)), desc(hits.createdAt), desc(hits.id))
    .limit(value('limit'))
    .offset(value('offset'))
    .prepare('room_message_search_page')
})
const countQuery = preparedOnce((db) => {
  const hits = hitsOf(db)
  return db
    .select({ total: count() })
    .from(hits)
    .innerJoin(roomMembers, membershipOf(hits))
    .prepare('room_message_search_count')
})

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
  const values = { accountId, conversationId, text: search.text }
  const page = await pageQuery(db).execute({ ...values, limit: search.limit, offset: search.offset })
  const total = page[0]?.total ?? (search.offset > 0 ? (await countQuery(db).execute(values))[0]?.total : 0)
  return { rows: page, total: total ?? 0 }
}
