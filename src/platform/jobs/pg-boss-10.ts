import { JOBS_SCHEMA } from './job-schema.js'

/**
 * pg-boss 10's schema (version 24) cannot be migrated by pg-boss 12: its oldest starting version is 25,
 * pg-boss 11's rewrite of the schema, which shipped without a migration from 10. So this release's pg-boss
 * installs itself beside it, in its own schema (JOBS_SCHEMA), and leaves pg-boss 10's where it is: the
 * previous release's instances, still serving while a deploy replaces them, go on queueing and running jobs
 * there. This release's instances adopt those jobs: every minute they move the ones still to run (waiting,
 * and running ones whose lock expired: their instance is gone) into their own queues, each in its account's
 * group. Once the previous release is gone and the old schema holds nothing to run, the operator drops it
 * (`drop schema pgboss cascade`), as the log line says.
 */

type Execute = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>

/** pg-boss 10's schema: pg-boss's default, where the previous release kept its jobs. */
export const V10_SCHEMA = 'pgboss'

/** pg-boss's schema version that pg-boss 12 cannot migrate from. */
const V10_VERSION = 24

/** How many jobs one statement moves: a short transaction, while the previous release's workers fetch too. */
const ADOPTED_AT_ONCE = 2000

/** Whether the database holds pg-boss 10's schema (a fresh database, or one that dropped it, does not). */
export async function hasV10Schema(execute: Execute): Promise<boolean> {
  // The version table is named only once it is known to exist.
  const { rows } = await execute(`select to_regclass('${V10_SCHEMA}.version') is not null as present`)
  if (!rows.some((row) => (row as { present?: boolean }).present === true)) return false
  const versions = await execute(`select max(version) as version from ${V10_SCHEMA}.version`)
  return (versions.rows[0] as { version?: number } | undefined)?.version === V10_VERSION
}

/**
 * Moves up to ADOPTED_AT_ONCE jobs still to run from pg-boss 10's queues into this release's queues of the
 * same names: waiting ones as they were, running ones whose lock expired as retries (their run died with its
 * instance; every job here is safe to run again, as after a lock's expiry). A job a previous instance holds is
 * skipped (SKIP LOCKED), so both releases can work at once; a job whose id this release's queue already holds
 * (the same singleton) is not queued twice. Returns how many jobs left the old schema, and how many remain.
 */
export async function adoptV10Jobs(execute: Execute): Promise<{ moved: number; remaining: number }> {
  const stillToRun = `(j.state in ('created', 'retry') or (j.state = 'active' and j.started_on + j.expire_in < now()))`
  const { rows } = await execute(`
    with picked as (
      select j.id from ${V10_SCHEMA}.job j
      where j.name in (select name from ${JOBS_SCHEMA}.queue) and ${stillToRun}
      limit ${ADOPTED_AT_ONCE}
      for update of j skip locked
    ), moved as (
      delete from ${V10_SCHEMA}.job j using picked where j.id = picked.id
      returning j.*
    ), adopted as (
      insert into ${JOBS_SCHEMA}.job (id, name, priority, data, state, retry_limit, retry_count, retry_delay,
        retry_backoff, expire_seconds, singleton_key, start_after, created_on, keep_until, group_id)
      select m.id, m.name, m.priority, m.data,
        (case when m.state = 'active' then 'retry' else m.state::text end)::${JOBS_SCHEMA}.job_state,
        m.retry_limit, m.retry_count, m.retry_delay, m.retry_backoff,
        greatest(1, extract(epoch from m.expire_in))::int, m.singleton_key,
        m.start_after, m.created_on, greatest(m.keep_until, now() + interval '1 day'),
        case when m.data ->> 'account_id' ~ '^[0-9a-f]{24}$' then m.data ->> 'account_id' end
      from moved m
      on conflict do nothing
    )
    select (select count(*) from moved)::int as moved`)
  const moved = (rows[0] as { moved: number } | undefined)?.moved ?? 0
  const left = await execute(
    `select count(*)::int as remaining from ${V10_SCHEMA}.job j where j.state in ('created', 'retry', 'active')`,
  )
  return { moved, remaining: (left.rows[0] as { remaining: number } | undefined)?.remaining ?? 0 }
}

/** How often pg-boss 10's schema is looked at for jobs the previous release queued. */
const ADOPT_INTERVAL_MS = 60_000

interface AdoptionLog {
  info(object: object, message: string): void
  warn(object: object, message: string): void
}

/**
 * Adopts pg-boss 10's jobs now, until none is left to move, and again every minute while its schema exists;
 * says once when it holds nothing more to run (the operator may then drop it). Returns the stop.
 */
export function adoptV10JobsEveryMinute(execute: Execute, log: AdoptionLog): () => void {
  let saidEmpty = false
  // A sweep that outlasts the minute is not joined by the next.
  let sweeping = false
  const adoptAll = async () => {
    if (!(await hasV10Schema(execute))) return
    let moved = 0
    let remaining = 0
    for (let batch = ADOPTED_AT_ONCE; batch === ADOPTED_AT_ONCE; ) {
      ;({ moved: batch, remaining } = await adoptV10Jobs(execute))
      moved += batch
    }
    if (moved > 0) log.info({ jobs: moved, remaining }, "jobs of pg-boss 10's schema adopted")
    if (remaining === 0 && !saidEmpty) {
      saidEmpty = true
      log.warn(
        { schema: V10_SCHEMA },
        `pg-boss 10's schema holds no job to run: drop it (drop schema ${V10_SCHEMA} cascade) once no instance of the previous release runs`,
      )
    }
  }
  const adopt = () => {
    if (sweeping) return
    sweeping = true
    adoptAll()
      .catch((error: unknown) => log.warn({ err: error }, "jobs of pg-boss 10's schema could not be adopted"))
      .finally(() => {
        sweeping = false
      })
  }
  adopt()
  const timer = setInterval(adopt, ADOPT_INTERVAL_MS)
  timer.unref()
  return () => clearInterval(timer)
}
