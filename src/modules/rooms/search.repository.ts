import { and, desc, eq, isNull, type SQL, type SQLWrapper, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type MessageRow, messageColumns } from './messages.repository.js'
import { type RoomType, roomMembers, roomMessages, rooms } from './tables.js'

export interface SearchRow {
  message: MessageRow
  roomName: string | null
  roomType: RoomType
}

/** A page of hits, and how many hits were ranked: `rankedHits` at most, `more` when others were not. */
export interface SearchPage {
  rows: SearchRow[]
  ranked: number
  more: boolean
}

/**
 * How many of the account's newest messages a search reads, newest first, per hit it ranks, before it turns
 * to the index of the account's words: a word in one message of ten finds its newest hits in the walk.
 */
export const WALK_PER_RANKED_HIT = 10

/** Who searches for what. */
interface Search {
  accountId: string
  conversationId: string
  text: string
}

/**
 * The search's words as the account's own (`room_search_query`: websearch_to_tsquery('simple'), each lexeme
 * behind the account's prefix, as `search_vector` holds them). The statement is not prepared, so PostgreSQL
 * computes the query once, when it plans, and estimates from the words' statistics how many messages hold
 * them.
 */
const queryOf = (search: Search) => sql`room_search_query(${search.accountId}::text, ${search.text}::text)`

/** The hit's room's column (a scalar subquery). */
const roomColumn = <T>(column: SQL, accountId: string, roomId: SQLWrapper) =>
  sql<T>`(select ${column} from ${rooms} where ${rooms.accountId} = ${accountId} and ${rooms.id} = ${roomId})`

/**
 * A message (not deleted) that matches, in a room the identity is a member of now. The membership is a
 * lookup per hit on the member's key, which OFFSET 0 keeps a subquery. Joined instead, PostgreSQL estimated
 * a few rooms for the largest account's member of 399 and probed the index once per room (docs/decisions.md).
 */
const matches = (
  search: Search,
  message: { roomId: SQLWrapper; deletedAt: SQLWrapper; vector: SQLWrapper },
) =>
  and(
    isNull(message.deletedAt),
    sql`${message.vector} @@ ${queryOf(search)}`,
    sql`exists (select 1 from ${roomMembers} where ${roomMembers.accountId} = ${search.accountId}
      and ${roomMembers.roomId} = ${message.roomId} and ${roomMembers.conversationId} = ${search.conversationId}
      offset 0)`,
  )

/** The newest hits first, read at most `count`. */
type Hit = SearchRow & { rank: number }

/**
 * The newest `count` hits among the account's newest `walk` messages, read newest first along
 * `room_messages_account_newest` and stopping once it has them: what a common word needs.
 */
async function newestHitsWalked(db: Database, search: Search, walk: number, count: number): Promise<Hit[]> {
  const walked = db
    .select({ ...messageColumns, searchVector: roomMessages.searchVector })
    .from(roomMessages)
    .where(eq(roomMessages.accountId, search.accountId))
    .orderBy(desc(roomMessages.createdAt), desc(roomMessages.id))
    .limit(walk)
    .as('walked')
  const { searchVector, ...message } = walked._.selectedFields
  return db
    .select({
      message,
      roomName: roomColumn<string | null>(sql`${rooms.name}`, search.accountId, walked.roomId),
      roomType: roomColumn<RoomType>(sql`${rooms.type}`, search.accountId, walked.roomId),
      rank: sql<number>`ts_rank(${searchVector}, ${queryOf(search)})`.mapWith(Number),
    })
    .from(walked)
    .where(matches(search, { roomId: walked.roomId, deletedAt: walked.deletedAt, vector: searchVector }))
    .orderBy(desc(walked.createdAt), desc(walked.id))
    .limit(count)
}

/**
 * The newest `count` hits older than the account's newest `walk` messages (none when it has no more): from
 * the GIN index of the account's own words (`room_messages_account_keyed_search`; `account_id` is still
 * compared, as two accounts may share a prefix), for a word too rare to be found by walking.
 */
function newestHitsOlder(db: Database, search: Search, walk: number, count: number): Promise<Hit[]> {
  const walkEnd = sql`(select ${roomMessages.createdAt}, ${roomMessages.id} from ${roomMessages}
    where ${roomMessages.accountId} = ${search.accountId}
    order by ${roomMessages.createdAt} desc, ${roomMessages.id} desc offset ${walk - 1} limit 1)`
  return db
    .select({
      message: messageColumns,
      roomName: roomColumn<string | null>(sql`${rooms.name}`, search.accountId, roomMessages.roomId),
      roomType: roomColumn<RoomType>(sql`${rooms.type}`, search.accountId, roomMessages.roomId),
      rank: sql<number>`ts_rank(${roomMessages.searchVector}, ${queryOf(search)})`.mapWith(Number),
    })
    .from(roomMessages)
    .where(
      and(
        eq(roomMessages.accountId, search.accountId),
        sql`(${roomMessages.createdAt}, ${roomMessages.id}) < ${walkEnd}`,
        matches(search, {
          roomId: roomMessages.roomId,
          deletedAt: roomMessages.deletedAt,
          vector: roomMessages.searchVector,
        }),
      ),
    )
    .orderBy(desc(roomMessages.createdAt), desc(roomMessages.id))
    .limit(count)
}

/**
 * Full-text search over the messages (not deleted) of the rooms the identity is a current member of: the
 * indexed `search_vector` against `websearch_to_tsquery('simple', text)`. Only the newest `rankedHits` hits
 * are ranked, by `ts_rank`, then newest first: a word in a hundred thousand messages costs what a word in a
 * thousand does, where ranking every hit read them all. They are looked for first among the account's newest
 * `rankedHits × WALK_PER_RANKED_HIT` messages, which hold them for a common word, and only then, for a rarer
 * one, among the older messages through the index of the account's words. One hit more is read, to know
 * whether there are more. Not a named prepared statement: a generic plan, blind to the words and to how
 * many rooms a member has, walked every hit once per room (0.45 s against 5 ms for the largest account).
 */
export async function searchMessages(
  db: Database,
  accountId: string,
  conversationId: string,
  search: { text: string; offset: number; limit: number; rankedHits: number },
): Promise<SearchPage> {
  const who = { accountId, conversationId, text: search.text }
  const wanted = search.rankedHits + 1
  const walk = search.rankedHits * WALK_PER_RANKED_HIT
  const walked = await newestHitsWalked(db, who, walk, wanted)
  const hits =
    walked.length < wanted
      ? [...walked, ...(await newestHitsOlder(db, who, walk, wanted - walked.length))]
      : walked
  const ranked = hits.slice(0, search.rankedHits)
  ranked.sort(
    (a, b) =>
      b.rank - a.rank ||
      b.message.createdAt.getTime() - a.message.createdAt.getTime() ||
      (b.message.id > a.message.id ? 1 : b.message.id < a.message.id ? -1 : 0),
  )
  return {
    rows: ranked.slice(search.offset, search.offset + search.limit).map(({ rank: _, ...row }) => row),
    ranked: ranked.length,
    more: hits.length > search.rankedHits,
  }
}
