import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { errorResponses } from '../../platform/http/envelope.js'
import { callerOf, roomRoute } from './room-routes.js'
import { SearchQuery, SearchResults } from './search.schemas.js'
import { searchRoomMessages } from './search.service.js'

/** `GET /api/conversation-v2/room/search`: full-text search in the caller's rooms. */
export const messageSearchRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticate)

  // A static path: it wins over the rooms' `/:roomId` routes whatever the order of registration.
  app.get(
    '/search',
    roomRoute(
      platform,
      { operationId: 'messageSearch', summary: "Find messages in the caller's rooms (full-text, ranked)" },
      { querystring: SearchQuery, response: { 200: SearchResults, ...errorResponses(400, 401, 429) } },
    ),
    (request) => searchRoomMessages(platform.db, callerOf(request), request.query),
  )
}
