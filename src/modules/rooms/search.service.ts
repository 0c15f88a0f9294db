import type { Database } from '../../platform/db/connection.js'
import { paginate } from '../../platform/http/pagination.js'
import { messageView } from './messages.service.js'
import type { RoomCaller } from './room-access.service.js'
import { searchMessages } from './search.repository.js'
import type { SearchQuery, SearchResults } from './search.schemas.js'

/** Messages matching `q` in the rooms the caller is a member of now, best matches first. */
export async function searchRoomMessages(
  db: Database,
  caller: RoomCaller,
  query: SearchQuery,
): Promise<SearchResults> {
  const { data, pagination } = await paginate(
    query,
    (window) => searchMessages(db, caller.accountId, caller.conversationId, { text: query.q, ...window }),
    (row) => ({
      room: { _id: row.message.roomId, name: row.roomName, type: row.roomType },
      message: messageView(row.message),
    }),
  )
  return { results: data, pagination }
}
