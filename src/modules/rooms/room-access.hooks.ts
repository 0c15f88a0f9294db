import type { FastifyInstance, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify'
import type { Platform } from '../../platform/context.js'
import { byUser } from '../../platform/http/rate-limit.js'
import { type RoomCaller, roomCaller } from './room-access.service.js'

/** The caller of a room route: its account and its chat identity (401 without one). */
export const callerOf = (request: FastifyRequest): RoomCaller => roomCaller(request.auth)

async function requireChatIdentity(request: FastifyRequest): Promise<void> {
  callerOf(request)
}

/**
 * One budget per user for all the room routes of an app, whichever plugin holds them: one limiter (one
 * counter store) per platform. Per-route `config.rateLimit` would count each route apart.
 */
const limiters = new WeakMap<Platform, preHandlerAsyncHookHandler>()

function roomRateLimit(app: FastifyInstance, platform: Platform): preHandlerAsyncHookHandler {
  let limiter = limiters.get(platform)
  if (!limiter) {
    limiter = app.rateLimit({
      max: platform.config.rateLimits.roomPerMinute,
      timeWindow: '1 minute',
      keyGenerator: byUser,
    })
    limiters.set(platform, limiter)
  }
  return limiter
}

/** Every room route may answer these: no token or no chat identity (401), the rate limit (429). */
export const ROOM_ROUTE_ERRORS = [401, 429] as const
/** A room route naming a room may also answer a bad id (400), and not a member or no such room (404). */
export const ROOM_ERRORS = [400, 401, 404, 429] as const

/**
 * What every route under `/api/conversation-v2/room` shares, set up on the plugin `app`: a bearer token
 * carrying a chat identity (`conversation.id`; 401 without one), and the per-user rate limit
 * (`RATE_LIMIT_ROOMS_PER_MINUTE`) across all room routes.
 */
export function addRoomRouteHooks(app: FastifyInstance, platform: Platform): void {
  app.addHook('onRequest', app.authenticate)
  app.addHook('onRequest', requireChatIdentity)
  app.addHook('preHandler', roomRateLimit(app, platform))
}
