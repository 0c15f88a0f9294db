import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import { type Job, type JobInsert, PgBoss } from 'pg-boss'
import { type Database, type DatabaseHandle, rawExecutor } from '../db/connection.js'
import { ProviderUnavailable } from '../providers/provider-circuits.js'
import type { SpanAttributes, TraceHeaders } from '../tracing/span.js'
import { currentTraceHeaders, inSpan } from '../tracing/tracing.js'
import { type AccountShares, DEFAULT_SHARES, FETCH_LOOPS, groupConcurrencyOf } from './fair-share.js'
import { JOBS_SCHEMA } from './job-schema.js'
import { adoptV10JobsEveryMinute } from './pg-boss-10.js'
import { ensureStatusIndexes, type QueueStatus, queueStatus } from './queue-status.js'

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

/**
 * The account a job works for, and its plan: the job counts against the account's share of its queue's
 * workers (pg-boss's job group). Without a tier the default share applies.
 */
export interface JobAccount {
  id: string
  tier?: string
}

export interface EnqueueOptions {
  /** When to run: a Date, or seconds from now. */
  startAfter?: Date | number
  /** Jobs of the same name and key are created once; later sends with it are dropped (returns null). */
  singletonKey?: string
  /**
   * The account the job works for. Defaults to the data's `account_id` (without a tier), so that a job
   * naming its account is shared fairly without its caller saying it twice; `null` for platform work.
   */
  account?: JobAccount | null
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
  enqueueSoon<T extends object>(
    name: string,
    data: T,
    options?: Pick<EnqueueOptions, 'singletonKey' | 'account'>,
  ): void
  define(definition: JobDefinition<never>): void
  start(options: { runWorkers: boolean }): Promise<void>
  /** Stops fetching, and waits up to `timeoutMs` for the jobs running here to finish. */
  stop(options?: { timeoutMs?: number }): Promise<void>
  /** Throws unless the queue's tables answer (readiness). */
  ping(): Promise<void>
  /** How many jobs each queue holds in each state (`created`, `active`, `failed`, `completed`, ...). */
  countByState(): Promise<{ queue: string; state: string; count: number }[]>
  /**
   * pg-boss's supervision now, which it runs by itself as often as the lock asks: expired jobs failed,
   * finished jobs older than `keepFinishedMs` deleted (pg-boss 12 has no archive).
   */
  maintain(): Promise<void>
  /**
   * Per queue defined here, its unfinished jobs by state and the `top` accounts holding most of its
   * waiting and active jobs (queue-status.ts), for `GET /v1/admin/jobs`.
   */
  status(top: number): Promise<QueueStatus[]>
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
const DEFER_JOB = `update ${JOBS_SCHEMA}.job
  set state = 'retry', started_on = null, start_after = now() + $3 * interval '1 second'
  where name = $1 and id = $2 and state = 'active' and retry_count = $4`

/** The attempt a worker holds (pg-boss 12's fence): settling it leaves a later attempt of the job alone. */
const attemptOf = (job: Job<object>) => ({ id: job.id, retryCount: job.retryCount })

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
   * The tier of a job's account when its enqueuer does not say it, read with the enqueuer's executor (the
   * caller's transaction) or the queue's database: it weighs the account's share (`shares`). Without it, or
   * when it finds none, the default share applies.
   */
  tierOf?: (executor: Database, accountId: string) => Promise<string | undefined>
  /**
   * JOBS_LOCK_SECONDS: a job still active this long after it started belongs to a process that died (or
   * hangs); it is failed and retried by a live instance. Checked by pg-boss's maintenance, which runs every
   * quarter of it (at most every two minutes), so a dead process's job runs again within 1.25 times this.
   */
  lockSeconds: number
  /**
   * How long finished jobs stay in the queue's table before pg-boss deletes them (ms; default 12 hours).
   * pg-boss 12 has no archive: a finished job is kept this long, then deleted.
   */
  keepFinishedMs?: number
  /** Vacuum pg-boss's job table every two minutes: the database does not by itself (vacuum.ts). */
  vacuumAfterMaintenance?: boolean
  /** How much of each queue's workers one account may hold while others wait (fair-share.ts). */
  shares?: AccountShares
  logger: FastifyBaseLogger
}

/** How often the job table is vacuumed, where the database does not itself. */
const VACUUM_INTERVAL_MS = 120_000

/** pg-boss's supervision, which fails the jobs whose lock expired, runs this often (seconds). */
const maintenanceIntervalOf = (lockSeconds: number) => Math.max(1, Math.min(120, Math.ceil(lockSeconds / 4)))

/** The account a job counts against: the option's, else its data's `account_id`; none for platform work. */
function accountOf(data: object, account: JobAccount | null | undefined): JobAccount | undefined {
  if (account !== undefined) return account ?? undefined
  const id = (data as { account_id?: unknown }).account_id
  return typeof id === 'string' && id !== '' ? { id } : undefined
}

export function createJobQueue(handle: DatabaseHandle, options: JobQueueOptions): JobQueue {
  /** pg-boss's job group for the job's account: its id, and its tier (given, or `tierOf`'s) when known. */
  const groupOf = async (
    executor: Database,
    data: object,
    given: JobAccount | null | undefined,
    readTier = true,
  ) => {
    const account = accountOf(data, given)
    if (!account) return undefined
    const tier = account.tier ?? (readTier ? await options.tierOf?.(executor, account.id) : undefined)
    return { group: { id: account.id, ...(tier && { tier }) } }
  }
  const jobsConnection = handle.jobsConnection
  const pooled = 'connectionString' in jobsConnection
  const connection =
    'connectionString' in jobsConnection
      ? { ...jobsConnection, max: 4 }
      : { db: { executeSql: jobsConnection.executeSql } }
  const interval = maintenanceIntervalOf(options.lockSeconds)
  const boss = new PgBoss({
    ...connection,
    schema: JOBS_SCHEMA,
    // Expired locks are failed by pg-boss's supervision (monitor), finished jobs deleted by its maintenance.
    superviseIntervalSeconds: interval,
    monitorIntervalSeconds: interval,
    maintenanceIntervalSeconds: interval,
    // A job's creation wakes the workers of its queue on every instance (PostgreSQL's LISTEN/NOTIFY on a
    // connection of pg-boss's own), so that a job queued for a quiet account starts within a fetch
    // rather than a polling interval. The embedded database has one process: polling serves.
    useListenNotify: pooled,
    // pg-boss 12's history of its own queues' statistics, warnings and instances: not used here.
    persistWarnings: false,
  })
  boss.on('error', (error) => options.logger.error({ err: error }, 'job queue error'))
  const shares = options.shares ?? DEFAULT_SHARES
  // Every job's row is updated as it runs and deleted once finished: without a vacuum the table only grows.
  const vacuumJobTable = async () => {
    if (!options.vacuumAfterMaintenance) return
    await boss.getDb().executeSql(`vacuum ${JOBS_SCHEMA}.job`, [])
  }
  let vacuumTimer: NodeJS.Timeout | undefined
  const definitions = new Map<string, JobDefinition>()

  async function runJob(definition: JobDefinition, job: Job<object>): Promise<void> {
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
    // The queue's capacity on this instance is split between FETCH_LOOPS loops that fetch on their own:
    // while one runs a batch, the other fetches, and pg-boss's group limit (checked as it fetches) then
    // skips an account already holding its share, so another account's job is fetched at once.
    const batchSize = Math.max(1, Math.ceil((definition.batchSize ?? 1) / FETCH_LOOPS))
    const lanes = Math.max(1, Math.ceil((definition.concurrency ?? definition.batchSize ?? 1) / FETCH_LOOPS))
    const groupConcurrency = groupConcurrencyOf(batchSize * FETCH_LOOPS, shares)
    // pg-boss waits the polling interval after each fetch unless its worker is notified. A fetch that
    // returned jobs says more may be waiting (fewer than asked when the group limit cut it), so the queue's
    // loops fetch again at once: this one when its batch is done, the other, if idle, now, while this
    // batch's account holds its share (its next fetch then skips it). An empty queue is still polled once
    // per interval, so idling costs what it did.
    const fetchAgainAtOnce = () => {
      for (const worker of boss.getWipData())
        if (worker.name === name && worker.workId === workId) boss.notifyWorker(worker.id)
    }
    let workId: string | undefined
    workId = await boss.work<object>(
      name,
      {
        batchSize,
        localConcurrency: FETCH_LOOPS,
        groupConcurrency,
        pollingIntervalSeconds: options.pollingIntervalSeconds,
        // With LISTEN/NOTIFY on, a job becoming due later (startAfter) is still found by this poll.
        notifyPollingIntervalSeconds: options.pollingIntervalSeconds,
      },
      async (jobs) => {
        const outcomes = await settleEach(jobs, lanes, (job) => runJob(definition, job))
        // pg-boss completes a whole fetch by the handler's outcome; each job is settled here instead, each
        // for the attempt that was fetched (its retry count): a job whose lock expired meanwhile and that
        // another instance runs again is left to that run. What pg-boss completes after we return is
        // only what is still active, and none is.
        const done = jobs.filter((_, i) => outcomes[i]?.status === 'fulfilled')
        if (done.length > 0) await boss.complete(name, done.map(attemptOf))
        for (const [i, outcome] of outcomes.entries()) {
          const job = jobs[i]
          if (outcome.status !== 'rejected' || !job) continue
          const deferSeconds = deferralOf(outcome.reason)
          if (deferSeconds === undefined) await boss.fail(name, attemptOf(job), failure(outcome.reason))
          else await boss.getDb().executeSql(DEFER_JOB, [name, job.id, deferSeconds, job.retryCount])
        }
        if (jobs.length > 0) fetchAgainAtOnce()
      },
    )
  }

  let soon: (JobInsert & { name: string; account: JobAccount | null | undefined })[] = []
  let soonTimer: NodeJS.Timeout | undefined
  async function insertSoon(): Promise<void> {
    const jobs = soon
    soon = []
    soonTimer = undefined
    // pg-boss 12 inserts one queue's jobs per statement, and refuses an id twice in one insert.
    const byName = new Map<string, Map<string, JobInsert>>()
    for (const { name, account, ...job } of jobs) {
      const queued = byName.get(name) ?? new Map<string, JobInsert>()
      byName.set(name, queued)
      // A tier that cannot be read leaves the job the default share, not unqueued.
      const group = await groupOf(handle.db, job.data as object, account).catch(() =>
        groupOf(handle.db, job.data as object, account, false),
      )
      queued.set(job.id ?? String(queued.size), { ...job, ...group })
    }
    for (const [name, queued] of byName) {
      await boss
        .insert(name, [...queued.values()])
        .catch((error: unknown) =>
          options.logger.warn({ err: error, jobs: queued.size }, 'jobs queued soon could not be inserted'),
        )
    }
  }

  const execute = (text: string, values?: unknown[]) => boss.getDb().executeSql(text, values)
  let stopAdopting: (() => void) | undefined

  return {
    status: (top) => queueStatus(execute, [...definitions.keys()], top),

    enqueueSoon(name, data, enqueueOptions = {}) {
      if (!definitions.has(name)) throw new Error(`job ${name} is not defined`)
      const { singletonKey } = enqueueOptions
      soon.push({
        name,
        data: withTraceContext(data),
        ...(singletonKey !== undefined && { id: singletonId(name, singletonKey) }),
        account: enqueueOptions.account,
      })
      soonTimer ??= setTimeout(insertSoon, ENQUEUE_SOON_MS)
    },

    async enqueue(executor, name, data, enqueueOptions = {}) {
      if (!definitions.has(name)) throw new Error(`job ${name} is not defined`)
      const { startAfter, singletonKey } = enqueueOptions
      return inSpan(`send ${name}`, { kind: 'producer', attributes: jobAttributes(name, 'send') }, async () =>
        boss.send(name, withTraceContext(data), {
          db: { executeSql: rawExecutor(executor) },
          ...(startAfter !== undefined && { startAfter }),
          ...(singletonKey !== undefined && { id: singletonId(name, singletonKey) }),
          ...(await groupOf(executor, data, enqueueOptions.account)),
        }),
      )
    },

    define(definition) {
      definitions.set(definition.name, definition as JobDefinition)
    },

    async start({ runWorkers }) {
      await boss.start()
      // Our index of the waiting jobs by account (queue-status.ts), in pg-boss's schema once it exists. On
      // PostgreSQL built concurrently, in the background: a backlog's build must not hold the start back,
      // and another instance building it at once only makes this one's attempt fail.
      const indexed = ensureStatusIndexes(execute, pooled).catch((error: unknown) =>
        options.logger.warn({ err: error }, 'the index of waiting jobs by account could not be created'),
      )
      if (!pooled) await indexed
      for (const definition of definitions.values()) {
        const queue = {
          retryLimit: definition.retryLimit ?? 5,
          retryDelay: definition.retryDelaySeconds ?? 5,
          retryBackoff: definition.retryBackoff ?? true,
          expireInSeconds: definition.lockSeconds ?? options.lockSeconds,
          // pg-boss's own retention of finished jobs, applied by its maintenance (default 12 hours).
          deleteAfterSeconds: Math.max(1, Math.round((options.keepFinishedMs ?? 12 * 3_600_000) / 1000)),
          // Its creation wakes the workers at once where LISTEN/NOTIFY is on (PostgreSQL).
          notify: pooled,
        }
        // Queues must exist before the first send, or pg-boss refuses the job.
        if (await boss.getQueue(definition.name)) await boss.updateQueue(definition.name, queue)
        else await boss.createQueue(definition.name, queue)
        if (definition.cron) await boss.schedule(definition.name, definition.cron)
      }
      if (options.vacuumAfterMaintenance) {
        vacuumTimer = setInterval(
          () =>
            vacuumJobTable().catch((error: unknown) =>
              options.logger.warn({ err: error }, "pg-boss's job table could not be vacuumed"),
            ),
          VACUUM_INTERVAL_MS,
        )
        vacuumTimer.unref()
      }
      if (!runWorkers) return
      // Jobs the previous release (pg-boss 10) queued, or queues while a deploy replaces it, run here too.
      stopAdopting = adoptV10JobsEveryMinute(execute, options.logger)
      for (const definition of definitions.values()) await startWorker(definition)
    },

    async stop({ timeoutMs = 20_000 } = {}) {
      clearTimeout(soonTimer)
      clearInterval(vacuumTimer)
      stopAdopting?.()
      await insertSoon()
      await boss.stop({ graceful: true, close: true, timeout: timeoutMs })
    },

    async ping() {
      await boss.getQueues()
    },

    async maintain() {
      await boss.supervise()
      await vacuumJobTable()
    },

    async countByState() {
      // pg-boss keeps finished jobs in the same table until they are deleted (12 hours by default).
      const { rows } = await boss
        .getDb()
        .executeSql(
          `select name, state, count(*)::int as count from ${JOBS_SCHEMA}.job group by name, state`,
          [],
        )
      return (rows as { name: string; state: string; count: number }[]).map(({ name, state, count }) => ({
        queue: name,
        state,
        count,
      }))
    },
  }
}
