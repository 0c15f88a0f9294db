import type { Database } from '../../platform/db/connection.js'
import { type AppRow, findApp } from './repository.js'

/** How long an app read for client authentication is used again; see decisions.md, "/token throughput". */
export const APP_CACHE_MS = 5_000
const APPS_KEPT = 10_000

const cachesByDatabase = new WeakMap<Database, Map<string, { row: AppRow; until: number }>>()

function cacheOf(db: Database) {
  let cache = cachesByDatabase.get(db)
  if (!cache) {
    cache = new Map()
    cachesByDatabase.set(db, cache)
  }
  return cache
}

/**
 * The app, read at most APP_CACHE_MS ago: client authentication reads it on every token request, and that
 * read was a fifth of the request's cost. A change made through this process is seen at once
 * (`forgetApp`); another instance sees it within APP_CACHE_MS. Unknown ids are not kept.
 */
export async function findAppForClientAuth(db: Database, id: string): Promise<AppRow | undefined> {
  const cache = cacheOf(db)
  const kept = cache.get(id)
  if (kept && kept.until > Date.now()) return kept.row
  const row = await findApp(db, id)
  cache.delete(id)
  if (!row) return undefined
  if (cache.size >= APPS_KEPT) cache.delete(cache.keys().next().value as string)
  cache.set(id, { row, until: Date.now() + APP_CACHE_MS })
  return row
}

/** Drops the app's kept row after a change, so that this process authenticates against the new one. */
export function forgetApp(db: Database, id: string): void {
  cachesByDatabase.get(db)?.delete(id)
}
