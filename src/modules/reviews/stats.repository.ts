import { and, count, eq, gte, lt, ne, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { addedToStored } from '../../platform/db/counters.js'
import type { ReviewPlatform } from './documents.schemas.js'
import { type REQUEST_STATUSES, reviewRequestDailyCounts, reviewRequests } from './tables.js'

/** A group of the account's requests: created on `day` (UTC), on a platform, in a status, for a reason. */
export interface RequestCountRow {
  platform: ReviewPlatform
  day: string
  status: (typeof REQUEST_STATUSES)[number]
  reason: string | null
  total: number
  sent: number
  clicked: number
}

/**
 * The account's requests created in [from, to), counted per platform, UTC day, status and reason, from the
 * requests themselves: for the part of a day at either end of a period that does not start or end at midnight.
 */
export function countRequests(
  db: Database,
  accountId: string,
  period: { from: Date; to: Date },
): Promise<RequestCountRow[]> {
  const day = sql<string>`to_char(${reviewRequests.createdAt} at time zone 'UTC', 'YYYY-MM-DD')`
  return db
    .select({
      platform: reviewRequests.platform,
      day,
      status: reviewRequests.status,
      reason: reviewRequests.reason,
      total: count(),
      sent: count(reviewRequests.sentAt),
      clicked: count(reviewRequests.clickedAt),
    })
    .from(reviewRequests)
    .where(
      and(
        eq(reviewRequests.accountId, accountId),
        gte(reviewRequests.createdAt, period.from),
        lt(reviewRequests.createdAt, period.to),
      ),
    )
    .groupBy(reviewRequests.platform, day, reviewRequests.status, reviewRequests.reason)
}

const daily = reviewRequestDailyCounts

/** The account's requests created on the UTC days [from, to) (`YYYY-MM-DD`), from the daily roll-up. */
export function countRequestDays(
  db: Database,
  accountId: string,
  days: { from: string; to: string },
): Promise<RequestCountRow[]> {
  return db
    .select({
      platform: daily.platform,
      day: daily.day,
      status: daily.status,
      reason: daily.reason,
      total: daily.requests,
      sent: daily.sent,
      clicked: daily.clicked,
    })
    .from(daily)
    .where(
      and(
        eq(daily.accountId, accountId),
        gte(daily.day, days.from),
        lt(daily.day, days.to),
        // A group every request moved away from (scheduled ones, once sent) counts nothing.
        ne(daily.requests, 0),
      ),
    )
}

/** What the daily counts read of a request. */
type CountedRequest = Pick<
  typeof reviewRequests.$inferSelect,
  'createdAt' | 'platform' | 'status' | 'reason' | 'sentAt' | 'clickedAt'
>
type DailyCounts = typeof daily.$inferInsert

/** What a request adds to its day's counts, or with `sign` -1 takes away. */
function countsOf(accountId: string, request: CountedRequest, sign: 1 | -1): DailyCounts {
  return {
    accountId,
    day: request.createdAt.toISOString().slice(0, 10),
    platform: request.platform,
    status: request.status,
    // The stats break only skipped requests down by reason: a failure's text would only add groups.
    reason: request.status === 'skipped' ? (request.reason ?? 'unknown') : '',
    requests: sign,
    sent: request.sentAt ? sign : 0,
    clicked: request.clickedAt ? sign : 0,
  }
}

/** A request created (no `before`), or changed from `before` to `after`. */
export interface RequestChange {
  before?: CountedRequest
  after: CountedRequest
}

/**
 * Keeps the daily counts in step with the account's requests, in the transaction that creates or changes
 * them: a change takes the request away from the group it was counted in and adds it to its new one. A
 * change the counts do not see (a new send time, a follow-up) writes nothing. Groups are written in key
 * order, so that two transactions never wait for each other's groups in a circle.
 */
export async function countRequestChanges(
  tx: Database,
  accountId: string,
  changes: RequestChange[],
): Promise<void> {
  const groups = new Map<string, DailyCounts>()
  const add = (counts: DailyCounts) => {
    const key = JSON.stringify([counts.day, counts.platform, counts.status, counts.reason])
    const group = groups.get(key)
    if (!group) groups.set(key, counts)
    else for (const name of ['requests', 'sent', 'clicked'] as const) group[name] += counts[name]
  }
  for (const { before, after } of changes) {
    if (before) add(countsOf(accountId, before, -1))
    add(countsOf(accountId, after, 1))
  }
  const rows = [...groups]
    .filter(([, group]) => group.requests !== 0 || group.sent !== 0 || group.clicked !== 0)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([, group]) => group)
  if (rows.length === 0) return
  await tx
    .insert(daily)
    .values(rows)
    .onConflictDoUpdate({
      target: [daily.accountId, daily.day, daily.platform, daily.status, daily.reason],
      set: addedToStored({ requests: daily.requests, sent: daily.sent, clicked: daily.clicked }),
    })
}
