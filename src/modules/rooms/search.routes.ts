import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { callerOf, roomRouteOptions } from './room-access.routes.js'
import { SearchQuery, SearchResults } from './search.schemas.js'
import { searchRoomMessages } from './search.service.js'

/** `GET /api/conversation-v2/room/search`: full-text search in the caller's rooms. */
export const messageSearchRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const route = roomRouteOptions(app, platform)

  // A static path: it wins over the rooms' `/:roomId` routes whatever the order of registration.
  app.get(
    '/search',
    route('messageSearch', "Find messages in the caller's rooms (full-text, ranked)", {
      querystring: SearchQuery,
      response: { 200: SearchResults, ...errorResponses(400, 401, 429) },
    }),
    (request) => searchRoomMessages(platform.db, callerOf(request), request.query),
  )
}
