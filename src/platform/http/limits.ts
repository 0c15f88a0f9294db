import type { Redis } from 'ioredis'
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible'
import { TooManyRequests } from './errors.js'

/**
 * Counts calls per key and hour against a limit that differs by key (e.g. by account tier), in Redis
 * when there is one so that every instance counts together. @fastify/rate-limit keeps one counter per
 * route; this one spans every route a key calls.
 */
export function createHourlyLimit(redis: Redis | undefined, keyPrefix: string) {
  const limiters = new Map<number, RateLimiterMemory | RateLimiterRedis>()
  const limiterFor = (perHour: number) => {
    let limiter = limiters.get(perHour)
    if (!limiter) {
      const options = { keyPrefix: `${keyPrefix}:${perHour}`, points: perHour, duration: 3600 }
      limiter = redis
        ? new RateLimiterRedis({ ...options, storeClient: redis })
        : new RateLimiterMemory(options)
      limiters.set(perHour, limiter)
    }
    return limiter
  }
  /** Counts one call, or throws TooManyRequests (429) with the seconds until the hour frees one. */
  return async (key: string, perHour: number): Promise<void> => {
    try {
      await limiterFor(perHour).consume(key)
    } catch (error) {
      if (error instanceof RateLimiterRes) throw new TooManyRequests(Math.ceil(error.msBeforeNext / 1000))
      throw error
    }
  }
}

/**
 * Counts failures per key (e.g. wrong passwords for one email) and blocks the key once `failures` pile
 * up within `seconds`, whatever the address they come from; a success clears the count.
 */
export function createFailureLimit(
  redis: Redis | undefined,
  keyPrefix: string,
  options: { failures: number; seconds: number },
) {
  const settings = { keyPrefix, points: options.failures, duration: options.seconds }
  const limiter = redis
    ? new RateLimiterRedis({ ...settings, storeClient: redis })
    : new RateLimiterMemory(settings)
  /** Seconds until the key may try again (its failures lapse): 0 when it is not blocked. */
  const secondsBlocked = async (key: string): Promise<number> => {
    const counted = await limiter.get(key)
    return counted && counted.consumedPoints >= options.failures ? Math.ceil(counted.msBeforeNext / 1000) : 0
  }
  return {
    secondsBlocked,
    async blocked(key: string): Promise<boolean> {
      return (await secondsBlocked(key)) > 0
    },
    async failed(key: string): Promise<void> {
      await limiter.penalty(key, 1)
    },
    async succeeded(key: string): Promise<void> {
      await limiter.delete(key)
    },
  }
}

export type FailureLimit = ReturnType<typeof createFailureLimit>
