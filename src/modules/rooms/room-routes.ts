import type { FastifyRequest, FastifySchema } from 'fastify'
import type { Platform } from '../../platform/context.js'
import { byUser } from '../../platform/http/rate-limit.js'
import { type RoomCaller, roomCaller } from './room-access.service.js'

/**
 * The options of a room endpoint: its OpenAPI operation under the `rooms` tag with bearer security, its
 * schemas, and the per-user limit every room endpoint has (RATE_LIMIT_ROOMS_PER_MINUTE).
 */
export function roomRoute<S extends FastifySchema>(
  platform: Platform,
  operation: { operationId: string; summary: string },
  schema: S,
) {
  return {
    schema: { ...operation, tags: ['rooms'], security: [{ bearer: [] }], ...schema },
    config: {
      rateLimit: {
        max: platform.config.rateLimits.roomPerMinute,
        timeWindow: '1 minute',
        keyGenerator: byUser,
      },
    },
  }
}

/** The caller of a room endpoint (401 without a chat identity in the token). */
export const callerOf = (request: FastifyRequest): RoomCaller => roomCaller(request.auth)
