import { sql } from 'drizzle-orm'
import { vi } from 'vitest'
import type { TestApp } from './app.js'

/** Waits (polling, no sleep) until `check` passes: the queue applies events and sends within seconds. */
export const eventually = <T>(
  check: () => T | Promise<T>,
  options: { timeout?: number; interval?: number } = {},
) => vi.waitFor(check, { timeout: 10_000, interval: 100, ...options })

/** The rows of a raw `db.execute`. */
export const rowsOf = <T>(result: unknown) => (result as { rows: T[] }).rows

/** Which jobs: pg-boss's job name and one field of their data (`request_id`, `lead_id`, …) with its value. */
export interface JobsOf {
  name: string
  field: string
  value: string
}

/** When each waiting job (pg-boss's `start_after` of those `created`) is due, earliest first. */
export async function waitingJobStarts(t: TestApp, jobs: JobsOf): Promise<Date[]> {
  const result = await t.app.platform.db.execute(
    sql`select start_after from jobs.job where name = ${jobs.name} and data ->> ${jobs.field} = ${jobs.value}
      and state = 'created' order by start_after`,
  )
  return rowsOf<{ start_after: Date | string }>(result).map((row) => new Date(row.start_after))
}

/** Makes the waiting jobs due now: the queue then runs them as it would at their time, no sleeping. */
export async function makeJobsDue(t: TestApp, jobs: JobsOf): Promise<void> {
  await t.app.platform.db.execute(
    sql`update jobs.job set start_after = now() where name = ${jobs.name}
      and data ->> ${jobs.field} = ${jobs.value} and state = 'created'`,
  )
}

/** Waits until no job whose data has `field` = `value` is queued or running (any job name). */
export const jobsSettled = (t: TestApp, field: string, value: string) =>
  eventually(async () => {
    const pending = await t.app.platform.db.execute(
      sql`select 1 from jobs.job where data ->> ${field} = ${value} and state in ('created', 'retry', 'active')`,
    )
    if (rowsOf(pending).length > 0) throw new Error(`jobs with ${field} ${value} are still pending`)
  })
