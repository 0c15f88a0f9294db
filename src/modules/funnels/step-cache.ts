import type { Platform } from '../../platform/context.js'

/**
 * The origin's cache of resolved steps for edge delivery, one per app instance. Every write that touches
 * a funnel or its steps calls `forgetFunnel` after it commits, so no entry outlives the data it was read
 * from. Entries are filed under their funnel so that one call forgets all of a funnel's entries.
 */
export interface StepCache<T = unknown> {
  get(key: string): T | undefined
  set(key: string, funnelId: string, value: T): void
  forgetFunnel(funnelId: string): void
}

const caches = new WeakMap<Platform, StepCache>()

/** The step cache of this app instance (tests run several apps in one process, each with its own). */
export function stepCacheOf(platform: Platform): StepCache {
  let cache = caches.get(platform)
  if (!cache) {
    cache = createStepCache()
    caches.set(platform, cache)
  }
  return cache
}

export function createStepCache<T>(): StepCache<T> {
  const entries = new Map<string, { funnelId: string; value: T }>()
  const keysOfFunnel = new Map<string, Set<string>>()
  return {
    get: (key) => entries.get(key)?.value,
    set(key, funnelId, value) {
      entries.set(key, { funnelId, value })
      const keys = keysOfFunnel.get(funnelId) ?? new Set<string>()
      keysOfFunnel.set(funnelId, keys.add(key))
    },
    forgetFunnel(funnelId) {
      for (const key of keysOfFunnel.get(funnelId) ?? []) entries.delete(key)
      keysOfFunnel.delete(funnelId)
    },
  }
}
