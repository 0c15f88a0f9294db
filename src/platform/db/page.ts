import { count, type SQL } from 'drizzle-orm'
import type { PgSelect, PgTable } from 'drizzle-orm/pg-core'
import type { Database } from './connection.js'

/**
 * One page of a list and the total it is a page of. `rows` is the list's ordered query (`$dynamic()`), given
 * its window here; the total counts `where` in `from`, which need not join what the page shows. Both are
 * sent at once, so on PostgreSQL they run side by side on two connections.
 */
export async function selectPage<Q extends PgSelect>(
  db: Database,
  rows: Q,
  counted: { from: PgTable; where: SQL | undefined },
  window: { offset: number; limit: number },
): Promise<{ rows: Awaited<Q>; total: number }> {
  const [page, [totals]] = await Promise.all([
    rows.limit(window.limit).offset(window.offset),
    db.select({ total: count() }).from(counted.from).where(counted.where),
  ])
  return { rows: page as Awaited<Q>, total: totals?.total ?? 0 }
}
