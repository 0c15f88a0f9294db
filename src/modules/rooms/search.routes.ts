import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { addRoomRouteHooks, callerOf, ROOM_ROUTE_ERRORS } from './room-access.hooks.js'
import { SearchQuery, SearchResults } from './search.schemas.js'
import { searchRoomMessages } from './search.service.js'

/** `GET /api/conversation-v2/room/search`: full-text search in the caller's rooms. */
export const messageSearchRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  addRoomRouteHooks(app, platform)

  // A static path: it wins over the rooms' `/:roomId` routes whatever the order of registration.
  app.get(
    '/search',
    routeOptions({
      operationId: 'messageSearch',
      summary: "Find messages in the caller's rooms (full-text, ranked)",
      description:
        'Full-text search in the messages of the caller\'s rooms: `q` in web search syntax ("a phrase", ' +
        'or, -excluded), words matched whole and case-insensitively. Best matches first, then newest, ' +
        'among the newest ROOM_SEARCH_RANKED_HITS hits (200 by default; `total_exact: false` when more ' +
        'match); pages of `limit` (default 20, at most 100).',
      tags: ['rooms'],
      access: 'bearer',
      querystring: SearchQuery,
      response: { 200: SearchResults },
      errors: [...ROOM_ROUTE_ERRORS, 400],
      config: heavy(),
    }),
    (request) =>
      searchRoomMessages(platform.db, callerOf(request), request.query, platform.config.roomSearchRankedHits),
  )
}
