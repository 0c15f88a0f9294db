import type { Database } from '../../platform/db/connection.js'
import { pageWindow } from '../../platform/http/pagination.js'
import { messageView } from './messages.service.js'
import type { RoomCaller } from './room-access.service.js'
import { searchMessages } from './search.repository.js'
import type { SearchQuery, SearchResults } from './search.schemas.js'

/**
 * Messages matching `q` in the rooms the caller is a member of now, best matches first among the newest
 * `rankedHits` hits (ROOM_SEARCH_RANKED_HITS). When more match, the total is that bound and says so
 * (`total_exact: false`), as the lists' capped totals do.
 */
export async function searchRoomMessages(
  db: Database,
  caller: RoomCaller,
  query: SearchQuery,
  rankedHits: number,
): Promise<SearchResults> {
  const window = pageWindow(query)
  const { rows, ranked, more } = await searchMessages(db, caller.accountId, caller.conversationId, {
    text: query.q,
    ...window,
    rankedHits,
  })
  return {
    results: rows.map((row) => ({
      room: { _id: row.message.roomId, name: row.roomName, type: row.roomType },
      message: messageView(row.message),
    })),
    pagination: {
      page: query.page,
      limit: query.limit,
      total: ranked,
      pages: Math.ceil(ranked / query.limit),
      ...(more && { total_exact: false as const }),
    },
  }
}
