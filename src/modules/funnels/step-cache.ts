import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import type { Platform } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Logger } from '../../platform/log/logger.js'
import { closeRedis, duplicateRedis } from '../../platform/redis.js'

/** Where an instance that forgot a funnel tells the others (the message is the funnel id). */
const CHANNEL = 'funnels:step-cache-forget'

/**
 * The bounds of one instance's cache: entries, the characters they hold (a step's HTML may reach 5 MB),
 * and an age after which an entry is read again. The age bounds what no `forgetFunnel` reaches: a new
 * funnel whose base path now shadows a cached page of another funnel on the same domain.
 */
export const STEP_CACHE_LIMITS = { maxEntries: 50_000, maxChars: 256 * 1024 * 1024, ttlMs: 5 * 60_000 }

/**
 * The origin's cache of resolved steps for edge delivery, one per app instance. Every write that touches
 * a funnel or its steps calls `forgetFunnel` after it commits, so no entry outlives the data it was read
 * from; with Redis every instance forgets. Entries are filed under their funnel so that one call forgets
 * all of a funnel's entries.
 */
export interface StepCache<T = unknown> {
  get(key: string): T | undefined
  /**
   * Counts the forgets so far: taken before a read of the database and given back to `set`, it keeps a
   * value read before a forget (a write committing during the read) out of the cache.
   */
  generation(): number
  /** Keeps `value` unless a funnel was forgotten since `generation` was taken. */
  set(key: string, funnelId: string, value: T, generation: number): void
  /** Forgets the funnel's entries here and, with Redis, on every other instance. */
  forgetFunnel(funnelId: string): void
}

interface Shared {
  cache: StepCache<string>
  forgetHere(funnelId: string): void
}

const caches = new WeakMap<Platform, Shared>()

function sharedOf(platform: Platform): Shared {
  let shared = caches.get(platform)
  if (!shared) {
    const local = createStepCache<string>({ ...STEP_CACHE_LIMITS, sizeOf: (body) => body.length })
    shared = {
      forgetHere: local.forgetFunnel,
      cache: {
        ...local,
        forgetFunnel(funnelId) {
          local.forgetFunnel(funnelId)
          if (platform.redis) announce(platform.redis, funnelId, platform.log)
        },
      },
    }
    caches.set(platform, shared)
  }
  return shared
}

/** The step cache of this app instance (tests run several apps in one process, each with its own). */
export function stepCacheOf(platform: Platform): StepCache<string> {
  return sharedOf(platform).cache
}

/** What a write that changes a funnel needs: the database, and the step cache it makes forget the funnel. */
export interface FunnelWriteDeps {
  db: Database
  stepCache: Pick<StepCache, 'forgetFunnel'>
}

/** Runs `work` in one transaction, then, committed, makes the step cache forget the funnel. */
export async function inFunnelWrite<T>(
  deps: FunnelWriteDeps,
  funnelId: string,
  work: (tx: Database) => Promise<T>,
): Promise<T> {
  const result = await inTransaction(deps.db, work)
  deps.stepCache.forgetFunnel(funnelId)
  return result
}

function announce(redis: Redis, funnelId: string, log: Logger): void {
  redis.publish(CHANNEL, funnelId).catch((error: unknown) => {
    // The write is committed; the other instances' entries still lapse after STEP_CACHE_LIMITS.ttlMs.
    log.warn({ err: error, funnel_id: funnelId }, 'could not tell other instances to forget a funnel')
  })
}

/**
 * With Redis, makes this instance forget the funnels other instances forget; answers how to stop. Called
 * once by the app that serves the cache (the edge delivery routes).
 */
export async function listenForForgottenFunnels(platform: Platform): Promise<() => Promise<void>> {
  const subscriber = platform.redis && duplicateRedis(platform.redis, platform.log, 'funnel cache')
  if (!subscriber) return async () => {}
  const { forgetHere } = sharedOf(platform)
  subscriber.on('message', (_channel: string, funnelId: string) => {
    if (isId(funnelId)) forgetHere(funnelId)
  })
  await subscriber.subscribe(CHANNEL)
  return async () => {
    await closeRedis(subscriber)
  }
}

export interface StepCacheOptions<T> {
  maxEntries: number
  /** The most the entries may hold together, as `sizeOf` counts. */
  maxChars: number
  sizeOf: (value: T) => number
  ttlMs: number
}

/** A bounded cache, least recently used entries going first, whose entries are filed under a funnel. */
export function createStepCache<T>(options: StepCacheOptions<T>): StepCache<T> {
  const keysOfFunnel = new Map<string, Set<string>>()
  let forgets = 0
  const entries = new LRUCache<string, { funnelId: string; value: T }>({
    max: options.maxEntries,
    maxSize: options.maxChars,
    // An entry larger than the whole cache is not kept (lru-cache refuses it).
    sizeCalculation: (entry) => Math.max(1, options.sizeOf(entry.value)),
    ttl: options.ttlMs,
    // Evicted or replaced entries leave their funnel's list, so the lists stay as bounded as the cache.
    dispose: (entry, key) => {
      const keys = keysOfFunnel.get(entry.funnelId)
      keys?.delete(key)
      if (keys?.size === 0) keysOfFunnel.delete(entry.funnelId)
    },
  })
  return {
    get: (key) => entries.get(key)?.value,
    generation: () => forgets,
    set(key, funnelId, value, generation) {
      if (generation !== forgets) return
      entries.set(key, { funnelId, value })
      if (!entries.has(key)) return
      const keys = keysOfFunnel.get(funnelId) ?? new Set<string>()
      keysOfFunnel.set(funnelId, keys.add(key))
    },
    forgetFunnel(funnelId) {
      forgets++
      for (const key of [...(keysOfFunnel.get(funnelId) ?? [])]) entries.delete(key)
      keysOfFunnel.delete(funnelId)
    },
  }
}
