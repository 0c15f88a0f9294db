import { LRUCache } from 'lru-cache'
import { upToEntries } from '../../platform/cache-bounds.js'
import type { Database } from '../../platform/db/connection.js'
import { type AppRow, findApp } from './apps.repository.js'

/** How long an app read for client authentication is used again; see decisions.md, "/token throughput". */
export const APP_CACHE_MS = 5_000

const cachesByDatabase = new WeakMap<Database, LRUCache<string, AppRow>>()

function cacheOf(db: Database): LRUCache<string, AppRow> {
  let cache = cachesByDatabase.get(db)
  if (!cache) {
    cache = new LRUCache({
      ...upToEntries(10_000),
      ttl: APP_CACHE_MS,
      // A read that finds no app keeps nothing: lru-cache stores no undefined.
      fetchMethod: (id) => findApp(db, id),
      // The wall clock, as every other expiry of the service, looked up at each call (tests move it):
      // lru-cache would otherwise reuse a reading for 1 ms, and miss a move made within it.
      perf: { now: () => Date.now() },
      ttlResolution: 0,
    })
    cachesByDatabase.set(db, cache)
  }
  return cache
}

/**
 * The app, read at most APP_CACHE_MS ago: client authentication reads it on every token request, and that
 * read was a fifth of the request's cost. A change made through this process is seen at once
 * (`forgetApp`); another instance sees it within APP_CACHE_MS.
 */
export function findAppForClientAuth(db: Database, id: string): Promise<AppRow | undefined> {
  return cacheOf(db).fetch(id)
}

/** Drops the app's kept row after a change, so that this process authenticates against the new one. */
export function forgetApp(db: Database, id: string): void {
  cachesByDatabase.get(db)?.delete(id)
}
