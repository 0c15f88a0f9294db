import type { GroupConcurrencyConfig } from 'pg-boss'
import { isId } from '../db/ids.js'

/**
 * How much of a queue's workers one account may hold at once while its jobs wait: a percentage
 * of the queue's capacity, weighed by the account's tier. The rest stays free for the other accounts, so
 * that one account's backlog cannot delay another's job by more than a fetch; an account alone still runs
 * its share of the queue's workers at once.
 */
export interface AccountShares {
  /** JOBS_ACCOUNT_SHARE_PERCENT: the share of a job whose account's tier is not known, or not listed. */
  percent: number
  /** Per tier (`basic`, `pro`, `enterprise`): its share instead of `percent`. */
  tiers: Record<string, number>
}

export const DEFAULT_SHARES: AccountShares = { percent: 50, tiers: {} }

/** Each queue's workers fetch in this many loops at once, each holding up to its part of the capacity. */
export const FETCH_LOOPS = 2

/**
 * The jobs one account may have active at once (across every instance) in a queue whose loops hold
 * `capacity` jobs on each instance: its share of it, at least one job, and less than the whole capacity
 * when there is more than one slot. pg-boss counts them in the database (`groupConcurrency`). At 50 % or
 * less an account fills at most one of the two loops, so the other always fetches for the others at once;
 * above it, another account's job may wait for one batch of the loop the busy account shares.
 */
export function groupConcurrencyOf(capacity: number, shares: AccountShares): GroupConcurrencyConfig {
  const limit = (percent: number) =>
    Math.max(1, Math.min(capacity - 1, Math.floor((capacity * percent) / 100)))
  const tiers = Object.fromEntries(
    Object.entries(shares.tiers).map(([tier, percent]) => [tier, limit(percent)]),
  )
  return { default: limit(shares.percent), ...(Object.keys(tiers).length > 0 && { tiers }) }
}

/**
 * The account a provider's event names, as a job's account (enqueue's `account`), read from the event as
 * received without a query; `null` (the platform's work) when it names none or something that cannot be an
 * account id, so that a forged value cannot make an unbounded group name. Its tier is not known here: the
 * default share applies.
 */
export const jobAccountOf = (accountId: unknown): { id: string } | null =>
  isId(accountId) ? { id: accountId } : null
