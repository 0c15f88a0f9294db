import type { Database } from '../../platform/db/connection.js'
import { Invalid } from '../../platform/http/errors.js'
import { DAY_MS } from '../../platform/time.js'
import type { ReviewPlatform } from './documents.schemas.js'
import { countRequestDays, countRequests, type RequestCountRow } from './stats.repository.js'
import { MAX_STATS_DAYS, type RequestCounts, type ReviewStats, type StatsQuery } from './stats.schemas.js'

const DEFAULT_STATS_DAYS = 30

const noRequests = (): RequestCounts => ({
  requested: 0,
  scheduled: 0,
  sent: 0,
  clicked: 0,
  skipped: 0,
  skipped_by_reason: {},
  failed: 0,
  cancelled: 0,
  click_through_rate: 0,
})

/** Adds one group of requests (a platform, day, status and reason) to `counts`. */
function add(counts: RequestCounts, row: RequestCountRow): void {
  counts.requested += row.total
  counts.sent += row.sent
  counts.clicked += row.clicked
  if (row.status === 'scheduled') counts.scheduled += row.total
  if (row.status === 'failed') counts.failed += row.total
  if (row.status === 'cancelled') counts.cancelled += row.total
  if (row.status === 'skipped') {
    counts.skipped += row.total
    const reason = row.reason ?? 'unknown'
    counts.skipped_by_reason[reason] = (counts.skipped_by_reason[reason] ?? 0) + row.total
  }
}

/** The counts kept under `key`, made empty the first time. */
function countsOf<K>(groups: Map<K, RequestCounts>, key: K): RequestCounts {
  const counts = groups.get(key) ?? noRequests()
  groups.set(key, counts)
  return counts
}

const withRate = (counts: RequestCounts): RequestCounts => ({
  ...counts,
  click_through_rate: counts.sent === 0 ? 0 : Math.round((counts.clicked / counts.sent) * 10_000) / 10_000,
})

/** `from` and `to`, defaulting to the last 30 days; a reversed or longer than a year period is refused. */
function periodOf(query: StatsQuery, now: Date): { from: Date; to: Date } {
  const to = query.to ? new Date(query.to) : now
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_STATS_DAYS * DAY_MS)
  if (from >= to) throw new Invalid('from must be before to')
  if (to.getTime() - from.getTime() > MAX_STATS_DAYS * DAY_MS)
    throw new Invalid(`from and to may be at most ${MAX_STATS_DAYS} days apart`)
  return { from, to }
}

const midnightBefore = (time: Date) => new Date(Math.floor(time.getTime() / DAY_MS) * DAY_MS)
const midnightFrom = (time: Date) => new Date(Math.ceil(time.getTime() / DAY_MS) * DAY_MS)
const dayOf = (midnight: Date) => midnight.toISOString().slice(0, 10)

/**
 * The period's requests, counted: its whole UTC days from the daily roll-up, and the part of a day at either
 * end that does not start or end at midnight (the default period's, for one) from the requests themselves,
 * at most two days' worth. The answer is exact for any instants, and a year reads a few hundred groups.
 */
async function countPeriod(db: Database, accountId: string, period: { from: Date; to: Date }) {
  const firstMidnight = midnightFrom(period.from)
  const lastMidnight = midnightBefore(period.to)
  if (firstMidnight >= lastMidnight) return countRequests(db, accountId, period)
  const counts = [countRequestDays(db, accountId, { from: dayOf(firstMidnight), to: dayOf(lastMidnight) })]
  if (period.from < firstMidnight)
    counts.push(countRequests(db, accountId, { from: period.from, to: firstMidnight }))
  if (lastMidnight < period.to)
    counts.push(countRequests(db, accountId, { from: lastMidnight, to: period.to }))
  return (await Promise.all(counts)).flat()
}

/**
 * `GET /reviews/stats`: the account's requests created in the period, in total, per platform and per UTC
 * day: how many were asked (sent), how many clicked through, and why the others were not sent.
 */
export async function reviewStats(
  db: Database,
  accountId: string,
  query: StatsQuery,
  now = new Date(),
): Promise<ReviewStats> {
  const period = periodOf(query, now)
  const totals = noRequests()
  const platforms = new Map<ReviewPlatform, RequestCounts>()
  const days = new Map<string, RequestCounts>()
  for (const row of await countPeriod(db, accountId, period)) {
    add(totals, row)
    add(countsOf(platforms, row.platform), row)
    add(countsOf(days, row.day), row)
  }
  return {
    from: period.from.toISOString(),
    to: period.to.toISOString(),
    totals: withRate(totals),
    by_platform: [...platforms]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([platform, counts]) => ({ platform, ...withRate(counts) })),
    by_day: [...days]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([date, counts]) => ({ date, ...withRate(counts) })),
  }
}
