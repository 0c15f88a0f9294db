import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { TooManyRequests } from './errors.js'

/**
 * One rate-limit plugin for the whole service: in memory, or in Redis when REDIS_URL is set so that
 * limits hold across instances. Nothing is limited unless a route asks, with
 * `config: { rateLimit: { max, timeWindow, keyGenerator: byAccount } }`.
 * It runs as a preHandler, after authentication, so that keys can use the caller's identity.
 */
export async function registerRateLimit(app: FastifyInstance, redis: Redis | undefined): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    hook: 'preHandler',
    ...(redis && { redis, nameSpace: 'rate-limit:' }),
    errorResponseBuilder: (_request, context) => new TooManyRequests(Math.ceil(context.ttl / 1000)),
  })
}

export const byIp = (request: FastifyRequest) => `ip:${request.ip}`
export const byAccount = (request: FastifyRequest) => `account:${request.auth.account_id}`
export const byUser = (request: FastifyRequest) => `user:${request.auth.account_id}:${request.auth.uid}`
