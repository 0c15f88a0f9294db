import type { FastifyInstance, FastifyRequest, FastifySchema } from 'fastify'
import type { Config } from '../../config.js'
import { Unauthorized } from '../../platform/http/errors.js'
import type { RoomCaller } from './room-access.service.js'

/** The caller of a room route: its account and its chat identity (checked by `requireChatIdentity`). */
export function roomCaller(request: FastifyRequest): RoomCaller {
  return {
    accountId: request.auth.account_id,
    conversationId: (request.auth.conversation as { id: string }).id,
  }
}

async function requireChatIdentity(request: FastifyRequest): Promise<void> {
  if (!request.auth.conversation) throw new Unauthorized('token lacks conversation.id')
}

const byUser = (request: FastifyRequest) => `room-user:${request.auth.uid}`

/**
 * What every route under `/api/conversation-v2/room` shares, set up on the plugin `app`: a bearer token
 * carrying a chat identity (`conversation.id`; 401 without one). Returns a maker of route options: the
 * per-user rate limit (`RATE_LIMIT_ROOMS_PER_MINUTE`), the OpenAPI description, and the route's schema.
 */
export function roomRouteOptions(app: FastifyInstance, config: Config) {
  app.addHook('onRequest', app.authenticate)
  app.addHook('onRequest', requireChatIdentity)
  const rateLimit = { max: config.rateLimits.roomPerMinute, timeWindow: '1 minute', keyGenerator: byUser }
  return <S extends FastifySchema>(operationId: string, summary: string, schema: S) => ({
    config: { rateLimit },
    schema: { operationId, tags: ['rooms'], summary, security: [{ bearer: [] }], ...schema },
  })
}
