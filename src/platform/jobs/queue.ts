import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import PgBoss from 'pg-boss'
import { type Database, type DatabaseHandle, rawExecutor } from '../db/connection.js'
import { ProviderUnavailable } from '../providers/provider-circuits.js'
import type { SpanAttributes, TraceHeaders } from '../tracing/span.js'
import { currentTraceHeaders, inSpan } from '../tracing/tracing.js'

export interface JobDefinition<T extends object = object> {
  name: string
  handle: (data: T, context: { id: string }) => Promise<void>
  /** Attempts after the first; each waits `retryDelaySeconds`, doubled per attempt when backoff is on. */
  retryLimit?: number
  retryDelaySeconds?: number
  retryBackoff?: boolean
  /**
   * Jobs fetched together and run concurrently (default 1), each completed or failed on its own. For
   * queues that see bursts: a backlog drains `batchSize` jobs per round trip instead of one.
   */
  batchSize?: number
  /**
   * How many jobs of a fetch run at once (default: the whole fetch). Each running job may hold a database
   * connection of the pool the API answers from, so a queue that sees bursts keeps this low.
   */
  concurrency?: number
  /** Also runs on this cron schedule (pg-boss's, UTC, at most once a minute across every instance). */
  cron?: string
  /**
   * How long a run may hold the job before it counts as dead and another instance retries it (default:
   * the queue's `lockSeconds`). For jobs that legitimately run longer, such as an account's removal.
   */
  lockSeconds?: number
}

export interface EnqueueOptions {
  /** When to run: a Date, or seconds from now. */
  startAfter?: Date | number
  /** Jobs of the same name and key are created once; later sends with it are dropped (returns null). */
  singletonKey?: string
}

export interface JobQueue {
  /** Creates the job with `executor`, so it commits or rolls back with the caller's transaction. */
  enqueue<T extends object>(
    executor: Database,
    name: string,
    data: T,
    options?: EnqueueOptions,
  ): Promise<string | null>
  /**
   * Queues the job a few milliseconds from now, in one insert with the others queued meanwhile, on the
   * queue's own connections: for work whose durable record is kept elsewhere (a stored webhook event that a
   * sweep queues again), so that a hot request neither waits for nor pays a statement of its own.
   */
  enqueueSoon<T extends object>(name: string, data: T, options?: Pick<EnqueueOptions, 'singletonKey'>): void
  define(definition: JobDefinition<never>): void
  start(options: { runWorkers: boolean }): Promise<void>
  /** Stops fetching, and waits up to `timeoutMs` for the jobs running here to finish. */
  stop(options?: { timeoutMs?: number }): Promise<void>
  /** Throws unless the queue's tables answer (readiness). */
  ping(): Promise<void>
  /** How many jobs each queue holds in each state (`created`, `active`, `failed`, `completed`, ...). */
  countByState(): Promise<{ queue: string; state: string; count: number }[]>
  /**
   * pg-boss's maintenance now, which it runs every two minutes by itself: finished jobs older than
   * `keepFinishedMs` go to its archive, archived ones older than `keepArchivedMs` are deleted.
   */
  maintain(): Promise<void>
}

/** How long `enqueueSoon` gathers jobs before inserting them together. */
const ENQUEUE_SOON_MS = 5

/** What pg-boss stores as a failed job's output (it serializes an Error's name, message and stack). */
const failure = (reason: unknown): object =>
  typeof reason === 'object' && reason !== null ? reason : { message: String(reason) }

/**
 * Seconds until a job refused by a provider's open circuit or full bulkhead runs again, or undefined for a
 * failure pg-boss retries as usual. The refusal says when the provider may be called again; up to as long
 * again at random spreads the jobs refused together, so that they do not all come back at once.
 */
function deferralOf(reason: unknown): number | undefined {
  if (!(reason instanceof ProviderUnavailable)) return undefined
  return reason.retryAfterSeconds * (1 + Math.random())
}

/**
 * Puts an active job back to wait `seconds` without spending one of its retries: pg-boss counts a retry
 * when it fetches a job that has started before (`started_on` set), so the job is made as if never started.
 * pg-boss has no call for this; its `fail` would count the refusal as an attempt, and an hour's outage
 * would use up every job's retries on calls that were never made.
 */
const DEFER_JOB = `update pgboss.job
  set state = 'retry', started_on = null, start_after = now() + $3 * interval '1 second'
  where name = $1 and id = $2 and state = 'active'`

/** Runs `run` on every item, at most `concurrency` at a time; each outcome as `Promise.allSettled` gives it. */
async function settleEach<T>(
  items: T[],
  concurrency: number,
  run: (item: T) => Promise<void>,
): Promise<PromiseSettledResult<void>[]> {
  const outcomes: PromiseSettledResult<void>[] = []
  let next = 0
  const lane = async () => {
    for (let i = next++; i < items.length; i = next++) {
      outcomes[i] = await run(items[i] as T).then(
        (value) => ({ status: 'fulfilled', value }) as const,
        (reason: unknown) => ({ status: 'rejected', reason }) as const,
      )
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, Math.min(concurrency, items.length)) }, lane))
  return outcomes
}

/**
 * The field of a job's data carrying the trace of the request (or job) that queued it, so that the job's
 * span continues that trace in whichever process runs it. Handlers never see it.
 */
const TRACE_FIELD = 'trace_context'

/** The job's data with the current trace context, when tracing is on and a span is current. */
function withTraceContext<T extends object>(data: T): T {
  const headers = currentTraceHeaders()
  return headers.traceparent ? { ...data, [TRACE_FIELD]: headers } : data
}

const jobAttributes = (name: string, operation: 'send' | 'process', id?: string): SpanAttributes => ({
  'messaging.system': 'pg-boss',
  'messaging.operation.type': operation,
  'messaging.destination.name': name,
  'messaging.message.id': id,
})

/** A deterministic UUID for a singleton key, so a retried enqueue inserts nothing. */
function singletonId(name: string, key: string): string {
  const hex = createHash('sha256').update(`${name}\n${key}`).digest('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`
}

export interface JobQueueOptions {
  pollingIntervalSeconds: number
  /**
   * JOBS_LOCK_SECONDS: a job still active this long after it started belongs to a process that died (or
   * hangs); it is failed and retried by a live instance. Checked by pg-boss's maintenance, which runs every
   * quarter of it (at most every two minutes), so a dead process's job runs again within 1.25 times this.
   */
  lockSeconds: number
  /**
   * How long finished jobs stay in the queue's table before pg-boss moves them to its archive (ms; pg-boss's
   * default 12 hours), and how long they stay there before it deletes them (default 7 days).
   */
  keepFinishedMs?: number
  keepArchivedMs?: number
  /** Vacuum pg-boss's tables after its maintenance: the database does not by itself (vacuum.ts). */
  vacuumAfterMaintenance?: boolean
  logger: FastifyBaseLogger
}

/** How often the job tables are vacuumed after pg-boss's maintenance, where the database does not itself. */
const VACUUM_INTERVAL_MS = 120_000

/** pg-boss's maintenance, which fails the jobs whose lock expired, runs this often (seconds). */
const maintenanceIntervalOf = (lockSeconds: number) => Math.max(1, Math.min(120, Math.ceil(lockSeconds / 4)))

export function createJobQueue(handle: DatabaseHandle, options: JobQueueOptions): JobQueue {
  const connection =
    'connectionString' in handle.jobsConnection
      ? { ...handle.jobsConnection, max: 4 }
      : { db: { executeSql: handle.jobsConnection.executeSql } }
  const boss = new PgBoss({
    ...connection,
    schema: 'pgboss',
    maintenanceIntervalSeconds: maintenanceIntervalOf(options.lockSeconds),
    // pg-boss's own retention of its tables, applied by its maintenance every two minutes.
    ...(options.keepFinishedMs && {
      archiveCompletedAfterSeconds: Math.round(options.keepFinishedMs / 1000),
    }),
    ...(options.keepArchivedMs && { deleteAfterSeconds: Math.round(options.keepArchivedMs / 1000) }),
  })
  boss.on('error', (error) => options.logger.error({ err: error }, 'job queue error'))
  // Every job's row is updated as it runs and deleted once archived: without a vacuum the tables only grow.
  const vacuumJobTables = async () => {
    if (!options.vacuumAfterMaintenance) return
    for (const table of ['pgboss.job', 'pgboss.archive']) await boss.getDb().executeSql(`vacuum ${table}`, [])
  }
  // Maintenance runs as often as the lock asks (every 30 s by default); the vacuum, as before, every 2 minutes.
  let vacuumedAt = 0
  boss.on('maintenance', () => {
    if (Date.now() - vacuumedAt < VACUUM_INTERVAL_MS) return
    vacuumedAt = Date.now()
    vacuumJobTables().catch((error: unknown) =>
      options.logger.warn({ err: error }, "pg-boss's tables could not be vacuumed"),
    )
  })
  const definitions = new Map<string, JobDefinition>()

  async function runJob(definition: JobDefinition, job: PgBoss.Job<object>): Promise<void> {
    const log = options.logger.child({ job: definition.name, job_id: job.id })
    const { [TRACE_FIELD]: parent, ...data } = job.data as { [TRACE_FIELD]?: TraceHeaders }
    const span = {
      kind: 'consumer',
      parent,
      attributes: jobAttributes(definition.name, 'process', job.id),
    } as const
    await inSpan(`process ${definition.name}`, span, async () => {
      try {
        await definition.handle(data, { id: job.id })
        log.debug('job done')
      } catch (error) {
        // The provider's circuit logs its opening once; a line per refused job would flood the log.
        if (error instanceof ProviderUnavailable)
          log.debug({ err: error }, 'job deferred: provider unavailable')
        else log.warn({ err: error }, 'job failed; pg-boss retries it while attempts remain')
        throw error
      }
    })
  }

  async function startWorker(definition: JobDefinition): Promise<void> {
    const { name } = definition
    const batchSize = definition.batchSize ?? 1
    let workerId: string | undefined
    let fullBeforeStarted = false
    // pg-boss 10 waits the polling interval after every fetch unless its worker is notified. A full fetch
    // says more jobs are likely waiting, so fetch again at once; an empty queue is still polled once per
    // interval, so idling costs what it did.
    const fetchAgainAtOnce = () => {
      if (workerId) boss.notifyWorker(workerId)
      else fullBeforeStarted = true
    }
    workerId = await boss.work<object>(
      name,
      { batchSize, pollingIntervalSeconds: options.pollingIntervalSeconds },
      async (jobs) => {
        const outcomes = await settleEach(jobs, definition.concurrency ?? batchSize, (job) =>
          runJob(definition, job),
        )
        // pg-boss completes or fails a whole fetch by the handler's outcome; settle each job here instead.
        // Completions go first: should failing the others throw, pg-boss then fails only what is still
        // active, never a job that succeeded. What it completes after we return is already settled.
        const done = jobs.filter((_, i) => outcomes[i]?.status === 'fulfilled').map((job) => job.id)
        if (done.length > 0) await boss.complete(name, done)
        for (const [i, outcome] of outcomes.entries()) {
          const job = jobs[i]
          if (outcome.status !== 'rejected' || !job) continue
          const deferSeconds = deferralOf(outcome.reason)
          if (deferSeconds === undefined) await boss.fail(name, job.id, failure(outcome.reason))
          else await boss.getDb().executeSql(DEFER_JOB, [name, job.id, deferSeconds])
        }
        if (jobs.length === batchSize) fetchAgainAtOnce()
      },
    )
    if (fullBeforeStarted) boss.notifyWorker(workerId)
  }

  let soon: PgBoss.JobInsert[] = []
  let soonTimer: NodeJS.Timeout | undefined
  async function insertSoon(): Promise<void> {
    const jobs = soon
    soon = []
    soonTimer = undefined
    if (jobs.length === 0) return
    await boss
      .insert(jobs)
      .catch((error: unknown) =>
        options.logger.warn({ err: error, jobs: jobs.length }, 'jobs queued soon could not be inserted'),
      )
  }

  return {
    enqueueSoon(name, data, enqueueOptions = {}) {
      if (!definitions.has(name)) throw new Error(`job ${name} is not defined`)
      const { singletonKey } = enqueueOptions
      soon.push({
        name,
        data: withTraceContext(data),
        ...(singletonKey !== undefined && { id: singletonId(name, singletonKey) }),
      })
      soonTimer ??= setTimeout(insertSoon, ENQUEUE_SOON_MS)
    },

    async enqueue(executor, name, data, enqueueOptions = {}) {
      if (!definitions.has(name)) throw new Error(`job ${name} is not defined`)
      const { startAfter, singletonKey } = enqueueOptions
      return inSpan(`send ${name}`, { kind: 'producer', attributes: jobAttributes(name, 'send') }, () =>
        boss.send(name, withTraceContext(data), {
          db: { executeSql: rawExecutor(executor) },
          ...(startAfter !== undefined && { startAfter }),
          ...(singletonKey !== undefined && { id: singletonId(name, singletonKey) }),
        }),
      )
    },

    define(definition) {
      definitions.set(definition.name, definition as JobDefinition)
    },

    async start({ runWorkers }) {
      await boss.start()
      for (const definition of definitions.values()) {
        const queue = {
          name: definition.name,
          retryLimit: definition.retryLimit ?? 5,
          retryDelay: definition.retryDelaySeconds ?? 5,
          retryBackoff: definition.retryBackoff ?? true,
          expireInSeconds: definition.lockSeconds ?? options.lockSeconds,
        }
        // Queues must exist before the first send, or pg-boss drops the job silently.
        if (await boss.getQueue(definition.name)) await boss.updateQueue(definition.name, queue)
        else await boss.createQueue(definition.name, queue)
        if (definition.cron) await boss.schedule(definition.name, definition.cron)
      }
      if (!runWorkers) return
      for (const definition of definitions.values()) await startWorker(definition)
    },

    async stop({ timeoutMs = 20_000 } = {}) {
      clearTimeout(soonTimer)
      await insertSoon()
      await boss.stop({ graceful: true, wait: true, close: true, timeout: timeoutMs })
    },

    async ping() {
      await boss.getQueues()
    },

    async maintain() {
      await boss.maintain()
      await vacuumJobTables()
    },

    async countByState() {
      // pg-boss keeps finished jobs in the same table until they are deleted (7 days by default).
      const { rows } = await boss
        .getDb()
        .executeSql('select name, state, count(*)::int as count from pgboss.job group by name, state', [])
      return (rows as { name: string; state: string; count: number }[]).map(({ name, state, count }) => ({
        queue: name,
        state,
        count,
      }))
    },
  }
}
