import { JOBS_SCHEMA } from './job-schema.js'

/**
 * What the operator sees of the job queues: per queue, its unfinished jobs by state, and the
 * accounts holding most of its waiting and active jobs. Served by indexes: pg-boss's `job_i7` (name,
 * group_id) of active jobs, and WAITING_GROUP_INDEX of ours, created in pg-boss's schema when the queue
 * starts. Only unfinished jobs are counted: finished ones (kept `JOBS_COMPLETED_RETENTION`) would make the
 * count grow with the traffic of the last hours rather than with the backlog.
 */

type Execute = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>

/**
 * Our index of the waiting jobs by group, on pg-boss's table of the queues that share one (every queue
 * here: none is created with `partition: true`). An index on the partitioned `job` table cannot be built
 * concurrently, its partition's can; it is created concurrently so that a live database with a backlog
 * keeps taking jobs while it is built.
 */
export const WAITING_GROUP_INDEX = 'job_common_waiting_group_i'
const createWaitingGroupIndex = (concurrently: boolean) =>
  `create index ${concurrently ? 'concurrently ' : ''}if not exists ${WAITING_GROUP_INDEX}
    on ${JOBS_SCHEMA}.job_common (name, group_id) where state < 'active' and group_id is not null`

/** Creates the index once pg-boss's schema exists; plainly on the embedded database (one connection). */
export async function ensureStatusIndexes(execute: Execute, concurrently: boolean): Promise<void> {
  // A concurrent build that failed leaves an invalid index that `if not exists` would keep: drop it first.
  const { rows } = await execute(
    `select 1 from pg_index i join pg_class c on c.oid = i.indexrelid
     join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = '${JOBS_SCHEMA}' and c.relname = $1 and not i.indisvalid`,
    [WAITING_GROUP_INDEX],
  )
  if (rows.length > 0)
    await execute(`drop index ${concurrently ? 'concurrently ' : ''}${JOBS_SCHEMA}.${WAITING_GROUP_INDEX}`)
  await execute(createWaitingGroupIndex(concurrently))
}

export interface AccountJobs {
  /** pg-boss's group: the account id (or `meta-page:<id>` for a lead event not filed yet). */
  account: string
  jobs: number
}

export interface QueueStatus {
  queue: string
  /** Jobs that may run now (`created` or `retry`, due). */
  ready: number
  /** Jobs waiting for their time (`startAfter` ahead: scheduled, or a retry's delay). */
  scheduled: number
  active: number
  /** The accounts with most jobs ready or scheduled, most first, at most `top`. */
  top_waiting: AccountJobs[]
  /** The accounts with most jobs running, most first, at most `top`. */
  top_active: AccountJobs[]
}

const COUNTS = `select name, count(*) filter (where state < 'active' and start_after <= now())::int as ready,
    count(*) filter (where state < 'active' and start_after > now())::int as scheduled,
    count(*) filter (where state = 'active')::int as active
  from ${JOBS_SCHEMA}.job where state <= 'active' group by name`

/** The `top` groups of each queue with most jobs in `states`; each a count off the index. */
const topGroups = (states: string) => `select name, group_id as account, jobs from (
    select name, group_id, count(*)::int as jobs,
      row_number() over (partition by name order by count(*) desc, group_id) as place
    from ${JOBS_SCHEMA}.job where ${states} and group_id is not null group by name, group_id
  ) ranked where place <= $1 order by name, place`

/** Every queue defined here, with its counts; a queue without jobs counts zeros. */
export async function queueStatus(execute: Execute, queues: string[], top: number): Promise<QueueStatus[]> {
  const counts = (await execute(COUNTS)).rows as {
    name: string
    ready: number
    scheduled: number
    active: number
  }[]
  const waiting = (await execute(topGroups("state < 'active'"), [top])).rows as ({
    name: string
  } & AccountJobs)[]
  const active = (await execute(topGroups("state = 'active'"), [top])).rows as ({
    name: string
  } & AccountJobs)[]
  const of = (rows: ({ name: string } & AccountJobs)[], queue: string) =>
    rows.filter((row) => row.name === queue).map(({ account, jobs }) => ({ account, jobs }))
  return [...queues].sort().map((queue) => {
    const count = counts.find((row) => row.name === queue)
    return {
      queue,
      ready: count?.ready ?? 0,
      scheduled: count?.scheduled ?? 0,
      active: count?.active ?? 0,
      top_waiting: of(waiting, queue),
      top_active: of(active, queue),
    }
  })
}
