import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { upToEntries } from '../cache-bounds.js'
import { isId } from '../db/ids.js'
import type { Logger } from '../log/logger.js'
import { closeRedis, duplicateRedis } from '../redis.js'

/** Where an instance that revoked grants tells the others, as their ids joined by commas. */
const CHANNEL = 'oauth:grants-revoked'

/**
 * Which OAuth grants are revoked, for the access tokens that carry their id: asked on every API call made
 * with one, so the answer is kept per instance. A revoked grant stays revoked, and is kept as long as a
 * token of it can live; a live one is asked again after `liveForMs`. An instance that revokes a grant knows
 * it at once and, with Redis, tells the others at once; without Redis (or should the news be lost) they
 * read it from the database within `liveForMs`.
 */
export interface RevokedGrants {
  isRevoked(grantId: string): Promise<boolean>
  /** After the revocation committed: marks the grants here and tells the other instances. */
  announce(grantIds: string[]): Promise<void>
  close(): Promise<void>
}

export interface RevokedGrantsOptions {
  /** Whether the grant is revoked, as the database says (the source of truth). */
  lookUp: (grantId: string) => Promise<boolean>
  redis: Redis | undefined
  /** How long a grant found live is taken as live (OAUTH_REVOCATION_CACHE_MS). */
  liveForMs: number
  /** How long a revoked grant is kept: the lifetime of its access tokens. */
  revokedForMs: number
  logger: Logger
}

export async function createRevokedGrants(options: RevokedGrantsOptions): Promise<RevokedGrants> {
  const known = new LRUCache<string, boolean>({
    ...upToEntries(100_000),
    ttl: options.liveForMs,
    fetchMethod: async (grantId, _stale, { options: entry }) => {
      const revoked = await options.lookUp(grantId)
      if (revoked) entry.ttl = options.revokedForMs
      return revoked
    },
    // The wall clock, as every other expiry of the service, read at each call (tests move it).
    perf: { now: () => Date.now() },
    ttlResolution: 0,
  })
  const markRevoked = (grantIds: string[]) => {
    for (const grantId of grantIds) known.set(grantId, true, { ttl: options.revokedForMs })
  }
  const subscriber = options.redis && duplicateRedis(options.redis, options.logger, 'revoked grants')
  if (subscriber) {
    subscriber.on('message', (_channel: string, message: string) =>
      markRevoked(message.split(',').filter(isId)),
    )
    await subscriber.subscribe(CHANNEL)
  }
  return {
    isRevoked: async (grantId) => (await known.fetch(grantId)) === true,
    async announce(grantIds) {
      if (grantIds.length === 0) return
      markRevoked(grantIds)
      try {
        await options.redis?.publish(CHANNEL, grantIds.join(','))
      } catch (error) {
        // The revocation is committed: the other instances read it from the database within liveForMs.
        options.logger.warn(
          { err: error, grants: grantIds.length },
          'could not tell other instances of revoked grants',
        )
      }
    },
    async close() {
      if (subscriber) await closeRedis(subscriber)
    },
  }
}
