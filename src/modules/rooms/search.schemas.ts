import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, StringEnum } from '../../platform/http/schemas.js'
import { Message } from './messages.schemas.js'
import { ROOM_TYPES } from './tables.js'

export const SearchQuery = Type.Composite([
  Type.Object({
    q: Type.String({
      minLength: 1,
      maxLength: 200,
      pattern: '\\S',
      description:
        'Words to find (web search syntax: "a phrase", or, -excluded), matched whole and case-insensitively',
    }),
  }),
  PageQuery(20, 100),
])
export type SearchQuery = Static<typeof SearchQuery>

export const SearchHit = Type.Object(
  {
    room: Type.Object({
      _id: Id(),
      name: Type.Union([Type.String(), Type.Null()], { description: 'Null for direct rooms' }),
      type: StringEnum(ROOM_TYPES),
    }),
    message: Message,
  },
  { title: 'RoomSearchHit' },
)
export type SearchHit = Static<typeof SearchHit>

export const SearchResults = Type.Object(
  {
    results: Type.Array(SearchHit, {
      description:
        'Best matches first, then newest first, among the newest hits: at most ROOM_SEARCH_RANKED_HITS (200 by default) are ranked',
    }),
    pagination: Type.Object({
      page: Type.Integer(),
      limit: Type.Integer(),
      total: Type.Integer({
        description: 'The hits ranked: every hit, or the newest ROOM_SEARCH_RANKED_HITS when more match',
      }),
      pages: Type.Integer({ description: 'Pages of the hits ranked' }),
      total_exact: Type.Optional(
        Type.Literal(false, {
          description:
            'Present only when more messages match than are ranked: `total` is then at least that many (the newest ' +
            'ROOM_SEARCH_RANKED_HITS hits, ranked), and older hits are not in the results; a narrower search finds them',
        }),
      ),
    }),
  },
  { title: 'RoomSearchResults' },
)
export type SearchResults = Static<typeof SearchResults>
