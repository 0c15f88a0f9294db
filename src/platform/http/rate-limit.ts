import { createRequire } from 'node:module'
import rateLimit, {
  type FastifyRateLimitOptions,
  type FastifyRateLimitStore,
  type FastifyRateLimitStoreCtor,
} from '@fastify/rate-limit'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { Redis } from 'ioredis'
import { REDIS_DOWN } from './account-budget.js'
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
    ...(redis && { store: sharedOrLocalStore(redis) }),
    errorResponseBuilder: (_request, context) => new TooManyRequests(Math.ceil(context.ttl / 1000)),
  })
}

export const byIp = (request: FastifyRequest) => `ip:${request.ip}`
export const byAccount = (request: FastifyRequest) => `account:${request.auth.account_id}`
export const byUser = (request: FastifyRequest) => `user:${request.auth.account_id}:${request.auth.uid}`

/** The plugin's own stores, which it does not export: the Redis one counts across instances, the local one here. */
const require = createRequire(import.meta.url)
interface StoreSettings {
  continueExceeding?: boolean
  exponentialBackoff?: boolean
}
type StoreFunction = new (...args: unknown[]) => FastifyRateLimitStore
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as StoreFunction
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as StoreFunction

/** Counts in `shared` while it answers, in `local` when it does not. */
class SharedOrLocalStore implements FastifyRateLimitStore {
  constructor(
    private readonly redis: Redis,
    private readonly shared: FastifyRateLimitStore,
    private readonly local: FastifyRateLimitStore,
  ) {}

  incr(...[key, callback, timeWindow, max]: Parameters<FastifyRateLimitStore['incr']>): void {
    // While Redis is known down, no request waits for a command to time out first.
    const countHere = () => this.local.incr(key, callback, timeWindow, max)
    if (REDIS_DOWN.has(this.redis.status)) countHere()
    else
      this.shared.incr(
        key,
        (error, result) => (error ? countHere() : callback(null, result)),
        timeWindow,
        max,
      )
  }

  child(routeOptions: Parameters<FastifyRateLimitStore['child']>[0]): FastifyRateLimitStore {
    return new SharedOrLocalStore(this.redis, this.shared.child(routeOptions), this.local.child(routeOptions))
  }
}

/**
 * The route limits fail open to each instance's own count while Redis is down (docs/decisions.md, "What
 * fails open without Redis"): they share the service between callers, and a Redis outage should cost
 * neither every limited route (a 503 each) nor every limit (none counted); with N instances a caller gets at
 * most N times its limit meanwhile.
 */
function sharedOrLocalStore(redis: Redis): FastifyRateLimitStoreCtor {
  return class extends SharedOrLocalStore {
    // The plugin hands every store its global settings, these two among them (its types leave them out).
    constructor({ continueExceeding, exponentialBackoff }: FastifyRateLimitOptions & StoreSettings) {
      super(
        redis,
        new RedisStore(continueExceeding, exponentialBackoff, redis, 'rate-limit:'),
        new LocalStore(continueExceeding, exponentialBackoff),
      )
    }
  }
}
