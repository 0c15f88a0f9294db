import { sql } from 'drizzle-orm'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import type { Database } from '../db/connection.js'
import { inTransaction } from '../db/transaction.js'
import { createJobQueue, type JobQueue } from './queue.js'

describe('job queue', () => {
  let database: TestDatabase
  let queue: JobQueue
  let db: Database
  const ran: { name: string; n: number }[] = []
  let flakyAttempts = 0
  const batchAttempts = new Map<number, number>()

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
    queue = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    queue.define({
      name: 'test.record',
      handle: async (data: { n: number }) => void ran.push({ name: 'record', n: data.n }),
    })
    queue.define({
      name: 'test.flaky',
      retryDelaySeconds: 1,
      retryBackoff: false,
      handle: async (data: { n: number }) => {
        flakyAttempts++
        if (flakyAttempts === 1) throw new Error('first attempt fails')
        ran.push({ name: 'flaky', n: data.n })
      },
    })
    queue.define({
      name: 'test.batch-flaky',
      batchSize: 5,
      retryDelaySeconds: 1,
      retryBackoff: false,
      handle: async (data: { n: number }) => {
        const attempt = (batchAttempts.get(data.n) ?? 0) + 1
        batchAttempts.set(data.n, attempt)
        if (data.n === 3 && attempt === 1) throw new Error('first attempt of job 3 fails')
      },
    })
    await queue.start({ runWorkers: true })
  })
  afterAll(async () => {
    await queue.stop()
    await database.drop()
  })

  const runs = (name: string, n: number) => ran.filter((r) => r.name === name && r.n === n).length
  let marker = 1000
  /** Enqueues a marker job and waits until it ran: the workers have polled again since. */
  async function workersPolledAgain(): Promise<void> {
    const n = ++marker
    await queue.enqueue(db, 'test.record', { n })
    await vi.waitFor(() => expect(runs('record', n)).toBe(1), { timeout: 10_000, interval: 100 })
  }

  it('runs a job enqueued in a committed transaction exactly once', async () => {
    await inTransaction(db, (tx) => queue.enqueue(tx, 'test.record', { n: 1 }))
    await vi.waitFor(() => expect(runs('record', 1)).toBe(1), { timeout: 10_000, interval: 100 })
    await workersPolledAgain()
    await workersPolledAgain()
    expect(runs('record', 1)).toBe(1)
  })

  it('counts the jobs of each queue by state, and answers a ping', async () => {
    await workersPolledAgain()
    const inAnHour = new Date(Date.now() + 3_600_000)
    await queue.enqueue(db, 'test.record', { n: -1 }, { startAfter: inAnHour })
    const counts = await queue.countByState()
    const count = (state: string) =>
      counts.find((row) => row.queue === 'test.record' && row.state === state)?.count
    expect(count('completed')).toBeGreaterThanOrEqual(1)
    expect(count('created')).toBe(1)
    await expect(queue.ping()).resolves.toBeUndefined()
  })

  it('never runs a job enqueued in a rolled-back transaction', async () => {
    await expect(
      inTransaction(db, async (tx) => {
        await queue.enqueue(tx, 'test.record', { n: 2 })
        throw new Error('the request failed')
      }),
    ).rejects.toThrow('the request failed')
    await queue.enqueue(db, 'test.record', { n: 3 })
    await vi.waitFor(() => expect(runs('record', 3)).toBe(1), { timeout: 10_000, interval: 100 })
    expect(runs('record', 2)).toBe(0)
  })

  it('waits for a delayed job', async () => {
    const enqueuedAt = Date.now()
    await queue.enqueue(db, 'test.record', { n: 4 }, { startAfter: 3 })
    await workersPolledAgain()
    expect(runs('record', 4)).toBe(0)
    await vi.waitFor(() => expect(runs('record', 4)).toBe(1), { timeout: 10_000, interval: 100 })
    expect(Date.now() - enqueuedAt).toBeGreaterThanOrEqual(3000)
  })

  it('creates a job once per singleton key', async () => {
    const first = await queue.enqueue(db, 'test.record', { n: 5 }, { singletonKey: 'event-5' })
    const again = await queue.enqueue(db, 'test.record', { n: 5 }, { singletonKey: 'event-5' })
    expect(first).toEqual(expect.any(String))
    expect(again).toBeNull()
    await vi.waitFor(() => expect(runs('record', 5)).toBe(1), { timeout: 10_000, interval: 100 })
  })

  it('queues jobs soon, several in one insert, once per singleton key', async () => {
    for (const n of [20, 21, 22]) queue.enqueueSoon('test.record', { n }, { singletonKey: `soon-${n}` })
    queue.enqueueSoon('test.record', { n: 20 }, { singletonKey: 'soon-20' })
    await vi.waitFor(() => expect([20, 21, 22].map((n) => runs('record', n))).toEqual([1, 1, 1]), {
      timeout: 10_000,
      interval: 100,
    })
    await workersPolledAgain()
    expect(runs('record', 20)).toBe(1)
    expect(() => queue.enqueueSoon('test.unknown', {})).toThrow('job test.unknown is not defined')
  })

  it('retries a failing job', async () => {
    await queue.enqueue(db, 'test.flaky', { n: 6 })
    await vi.waitFor(() => expect(runs('flaky', 6)).toBe(1), { timeout: 15_000, interval: 100 })
    expect(flakyAttempts).toBe(2)
  })

  it('retries only the failing job of a batch, and completes the others once', async () => {
    await inTransaction(db, async (tx) => {
      for (const n of [1, 2, 3, 4, 5]) await queue.enqueue(tx, 'test.batch-flaky', { n })
    })
    // pg-boss's own record: every job completed, and only job 3 was ever failed (one retry). A job failed
    // along with job 3 would show a retry, or still be waiting for one.
    await vi.waitFor(
      async () => {
        const result = await db.execute(sql`
          select (data ->> 'n')::int as n, state, retry_count from jobs.job
          where name = 'test.batch-flaky' order by n`)
        expect((result as unknown as { rows: object[] }).rows).toEqual(
          [1, 2, 3, 4, 5].map((n) => ({ n, state: 'completed', retry_count: n === 3 ? 1 : 0 })),
        )
      },
      { timeout: 15_000, interval: 100 },
    )
    expect(Object.fromEntries(batchAttempts)).toEqual({ 1: 1, 2: 1, 3: 2, 4: 1, 5: 1 })
  })

  it('runs a batch concurrently and fetches again at once while fetches come back full', async () => {
    const pollingIntervalSeconds = 3
    const batched = createJobQueue(database.handle, {
      pollingIntervalSeconds,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    let inFlight = 0
    let mostInFlight = 0
    const runs: { startedAt: number; endedAt: number }[] = []
    batched.define({
      name: 'test.burst',
      batchSize: 10,
      handle: async () => {
        const startedAt = Date.now()
        mostInFlight = Math.max(mostInFlight, ++inFlight)
        await new Promise((resolve) => setTimeout(resolve, 100))
        inFlight--
        runs.push({ startedAt, endedAt: Date.now() })
      },
    })
    await batched.start({ runWorkers: true })
    try {
      // One commit, so that every fetch sees all the remaining jobs and comes back full until the last.
      await inTransaction(db, async (tx) => {
        for (let n = 0; n < 30; n++) await batched.enqueue(tx, 'test.burst', { n })
      })
      await vi.waitFor(() => expect(runs).toHaveLength(30), { timeout: 20_000, interval: 50 })
      expect(mostInFlight).toBe(10)
      // Three fetches; waiting the polling interval between them would take at least two intervals.
      const first = Math.min(...runs.map((run) => run.startedAt))
      const last = Math.max(...runs.map((run) => run.endedAt))
      expect(last - first).toBeLessThan(pollingIntervalSeconds * 1000)
    } finally {
      await batched.stop()
    }
  })

  it('runs at most `concurrency` jobs of a fetch at once, each settled on its own', async () => {
    const limited = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    let inFlight = 0
    let mostInFlight = 0
    const done: number[] = []
    limited.define({
      name: 'test.limited',
      batchSize: 8,
      concurrency: 2,
      retryDelaySeconds: 1,
      retryBackoff: false,
      handle: async (data: { n: number }) => {
        mostInFlight = Math.max(mostInFlight, ++inFlight)
        await new Promise((resolve) => setTimeout(resolve, 50))
        inFlight--
        if (data.n === 4 && !done.includes(-4)) {
          done.push(-4)
          throw new Error('first attempt of job 4 fails')
        }
        done.push(data.n)
      },
    })
    await limited.start({ runWorkers: true })
    try {
      await inTransaction(db, async (tx) => {
        for (let n = 0; n < 8; n++) await limited.enqueue(tx, 'test.limited', { n })
      })
      await vi.waitFor(() => expect(done.filter((n) => n >= 0).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]), {
        timeout: 15_000,
        interval: 50,
      })
      expect(mostInFlight).toBe(2)
    } finally {
      await limited.stop()
    }
  })

  it('schedules a job with a cron expression', async () => {
    const scheduled = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    scheduled.define({ name: 'test.every-minute', cron: '* * * * *', handle: async () => undefined })
    await scheduled.start({ runWorkers: false })
    try {
      const result = await db.execute(
        sql`select name, cron from jobs.schedule where name = 'test.every-minute'`,
      )
      expect((result as unknown as { rows: object[] }).rows).toEqual([
        { name: 'test.every-minute', cron: '* * * * *' },
      ])
    } finally {
      await scheduled.stop()
    }
  })

  it('retries a job whose process died once its lock expires, on a live instance', async () => {
    const instance = () =>
      createJobQueue(database.handle, {
        pollingIntervalSeconds: 0.5,
        lockSeconds: 4,
        logger: pino({ level: 'silent' }),
      })
    const runs: string[] = []
    const define = (queue: JobQueue) =>
      queue.define({ name: 'test.orphaned', retryDelaySeconds: 1, handle: async () => void runs.push('run') })
    const dead = instance()
    define(dead)
    await dead.start({ runWorkers: false })
    // What a process killed mid-job leaves behind: its job active, started, never completed.
    const id = await dead.enqueue(db, 'test.orphaned', {})
    await db.execute(sql`update jobs.job set state = 'active', started_on = now() where id = ${id}`)
    await dead.stop()
    const started = Date.now()
    const live = instance()
    define(live)
    await live.start({ runWorkers: true })
    try {
      // The lock (4 s), a maintenance round (every second), the retry delay (1 s), and a poll.
      await vi.waitFor(() => expect(runs).toEqual(['run']), { timeout: 15_000, interval: 100 })
      expect(Date.now() - started).toBeGreaterThanOrEqual(3_000)
    } finally {
      await live.stop()
    }
  })

  it('lets a running job finish when it stops', async () => {
    const second = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    const events: string[] = []
    second.define({
      name: 'test.slow',
      handle: async () => {
        events.push('started')
        await new Promise((resolve) => setTimeout(resolve, 800))
        events.push('finished')
      },
    })
    await second.start({ runWorkers: true })
    await second.enqueue(db, 'test.slow', {})
    await vi.waitFor(() => expect(events).toEqual(['started']), { timeout: 10_000, interval: 50 })
    await second.stop()
    expect(events).toEqual(['started', 'finished'])
  })

  it("shares a queue's workers between accounts: one account's backlog does not hold back another's job", async () => {
    const shared = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    const order: string[] = []
    shared.define({
      name: 'test.fair',
      batchSize: 4,
      handle: async (data: { account_id: string; n: number }) => {
        await new Promise((resolve) => setTimeout(resolve, 20))
        order.push(`${data.account_id}:${data.n}`)
      },
    })
    await shared.start({ runWorkers: true })
    try {
      // Account A's backlog, in one commit, then one job of account B once A's have started running.
      await inTransaction(db, async (tx) => {
        for (let n = 0; n < 200; n++) await shared.enqueue(tx, 'test.fair', { account_id: 'account-a', n })
      })
      await vi.waitFor(() => expect(order.length).toBeGreaterThan(0), { timeout: 10_000, interval: 20 })
      await shared.enqueue(db, 'test.fair', { account_id: 'account-b', n: 0 })
      await vi.waitFor(() => expect(order).toHaveLength(201), { timeout: 60_000, interval: 100 })
      // First come, first served, B's job would run after all of A's: A may hold only half the workers.
      const aRunBeforeB = order.indexOf('account-b:0')
      expect(aRunBeforeB).toBeGreaterThan(0)
      expect(aRunBeforeB).toBeLessThan(100)
    } finally {
      await shared.stop()
    }
  })

  it("stores the job's account and tier as its pg-boss group: given, or the data's account_id", async () => {
    await queue.enqueue(db, 'test.record', { n: 30 }, { account: { id: 'account-c', tier: 'pro' } })
    await queue.enqueue(db, 'test.record', { n: 31, account_id: 'account-d' })
    await queue.enqueue(db, 'test.record', { n: 32, account_id: 'account-e' }, { account: null })
    queue.enqueueSoon('test.record', { n: 33 }, { account: { id: 'account-f' } })
    await vi.waitFor(() => expect([30, 31, 32, 33].map((n) => runs('record', n))).toEqual([1, 1, 1, 1]), {
      timeout: 10_000,
      interval: 100,
    })
    const result = await db.execute(sql`
      select (data ->> 'n')::int as n, group_id, group_tier from jobs.job
      where name = 'test.record' and (data ->> 'n')::int between 30 and 33 order by n`)
    expect((result as unknown as { rows: object[] }).rows).toEqual([
      { n: 30, group_id: 'account-c', group_tier: 'pro' },
      { n: 31, group_id: 'account-d', group_tier: null },
      { n: 32, group_id: null, group_tier: null },
      { n: 33, group_id: 'account-f', group_tier: null },
    ])
  })

  it('refuses a job name nobody defined', async () => {
    await expect(queue.enqueue(db, 'test.unknown', {})).rejects.toThrow('job test.unknown is not defined')
  })
})
