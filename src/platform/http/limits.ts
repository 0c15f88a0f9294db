import { isIPv6 } from 'node:net'
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
      // While Redis does not answer, each instance counts on its own (its insurance): the quota fails
      // open by the number of instances, never to no limit, nor to refusing every call.
      limiter = redis
        ? new RateLimiterRedis({
            ...options,
            storeClient: redis,
            insuranceLimiter: new RateLimiterMemory(options),
          })
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
 * Counts failures per key (e.g. a client's wrong secrets, or wrong passwords for one email from one IP)
 * and blocks the key once `failures` pile up within `seconds` of the first; a success clears the count.
 * Without Redis it fails closed: a lockout that each instance counted alone would give a guesser N times
 * the tries, so the call fails and the request answers 503 with Retry-After until Redis is back.
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
  /** How long the key stays blocked, in whole seconds rounded up; 0 when it is not blocked. */
  async function secondsBlocked(key: string): Promise<number> {
    const counted = await limiter.get(key)
    if (!counted || counted.consumedPoints < options.failures) return 0
    return Math.max(1, Math.ceil(counted.msBeforeNext / 1000))
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

/**
 * The source a limit counts a client by: its IPv4 address, or its IPv6 address's /64. One subscriber holds
 * at least a /64 (RFC 6177), so counting single IPv6 addresses would give each attacker 2^64 fresh starts.
 */
export function sourceOf(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) return mapped[1] as string
  if (!isIPv6(ip)) return ip
  const [head, tail] = (ip.split('%')[0] as string).split('::')
  const groups = (part: string | undefined) => (part ? part.split(':') : [])
  // An IPv4 tail (::1.2.3.4) fills two groups.
  const width = (parts: string[]) => parts.reduce((n, part) => n + (part.includes('.') ? 2 : 1), 0)
  const all =
    tail === undefined
      ? groups(head)
      : [...groups(head), ...Array(8 - width(groups(head)) - width(groups(tail))).fill('0'), ...groups(tail)]
  return `${all
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')}::/64`
}
