import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { expect, vi } from 'vitest'
import { rowsOf } from './jobs.js'

/**
 * Until a statement of the app's database waits on a lock (PostgreSQL only): a request started while the
 * test's own transaction holds a row it needs has reached that row.
 */
export async function untilWaitingOnALock(app: FastifyInstance): Promise<void> {
  await vi.waitFor(
    async () => {
      const [lock] = rowsOf<{ waiting: number }>(
        await app.platform.db.execute(
          sql`select count(*)::int as waiting from pg_stat_activity
              where datname = current_database() and wait_event_type = 'Lock'`,
        ),
      )
      expect(lock?.waiting).toBeGreaterThan(0)
    },
    { timeout: 900, interval: 10 },
  )
}
