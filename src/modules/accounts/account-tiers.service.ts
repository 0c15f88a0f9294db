import { LRUCache } from 'lru-cache'
import { upToEntries } from '../../platform/cache-bounds.js'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { findAccountTier } from './accounts.repository.js'

/** How long an account's tier is used again for its jobs: a changed plan weighs its jobs within a minute. */
export const ACCOUNT_TIER_CACHE_MS = 60_000

/**
 * The tier of a job's account, which weighs its share of the job queues' workers (JOBS_<TIER>_SHARE_PERCENT):
 * read once a minute per account and instance, with the enqueuer's executor so that a job queued inside a
 * transaction reads inside it (the embedded database has one connection). Undefined for a group that is no
 * account (a Meta page's events) or an account that does not exist: the default share applies.
 */
export function createAccountTiers(): (db: Database, accountId: string) => Promise<string | undefined> {
  const tiers = new LRUCache<string, string>({ ...upToEntries(10_000), ttl: ACCOUNT_TIER_CACHE_MS })
  return async (db, accountId) => {
    if (!isId(accountId)) return undefined
    const known = tiers.get(accountId)
    if (known !== undefined) return known
    const tier = await findAccountTier(db, accountId)
    if (tier !== undefined) tiers.set(accountId, tier)
    return tier
  }
}
