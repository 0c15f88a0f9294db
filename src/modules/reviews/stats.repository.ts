import { and, count, eq, gte, lt, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { reviewRequests } from './tables.js'

/** The account's requests created in [from, to), counted per platform, UTC day, status and reason. */
export function countRequests(db: Database, accountId: string, period: { from: Date; to: Date }) {
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

export type RequestCountRow = Awaited<ReturnType<typeof countRequests>>[number]
