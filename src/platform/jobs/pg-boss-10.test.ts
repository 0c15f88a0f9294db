import { readFileSync } from 'node:fs'
import pg from 'pg'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestDatabase, type TestDatabase } from '../../../test/helpers/database.js'
import { createJobQueue } from './queue.js'

/** pg-boss 10.4.2's schema (version 24), as its getConstructionPlans('pgboss') wrote it. */
const V10_SCHEMA_SQL = readFileSync(
  new URL('../../../test/fixtures/pg-boss-10-schema.sql', import.meta.url),
  'utf8',
)

const ACCOUNT = '0123456789abcdef01234567'

describe("the upgrade from pg-boss 10's schema, which pg-boss 12 cannot migrate", () => {
  let database: TestDatabase
  /** A multi-statement script, without parameters, on the test's database. */
  let run: (text: string) => Promise<{ rows: unknown[] }>

  beforeAll(async () => {
    database = await createTestDatabase()
    const connection = database.handle.jobsConnection
    run = async (text) => {
      if ('executeSql' in connection) return connection.executeSql(text, [])
      const client = new pg.Client({ connectionString: connection.connectionString })
      await client.connect()
      try {
        const results = (await client.query(text)) as unknown as pg.QueryResult | pg.QueryResult[]
        return { rows: (Array.isArray(results) ? results : [results]).flatMap((result) => result.rows) }
      } finally {
        await client.end()
      }
    }
    // A database as the previous release left it: pg-boss 10's schema, a queue, its jobs in every state.
    await run('drop schema if exists pgboss cascade')
    await run(V10_SCHEMA_SQL)
    await run(`
      select pgboss.create_queue('test.carried', '{"policy": "standard"}');
      insert into pgboss.job (name, data, state, started_on) values
        ('test.carried', '{"n": 1, "account_id": "${ACCOUNT}"}', 'created', null),
        ('test.carried', '{"n": 2}', 'retry', now()),
        ('test.carried', '{"n": 3}', 'active', now()),
        ('test.carried', '{"n": 4}', 'completed', now()),
        ('test.carried', '{"n": 5}', 'active', now() - interval '1 hour');`)
  })
  afterAll(async () => {
    await database.drop()
  })

  it("leaves it to the previous release, and runs the jobs it holds to run once each, in the account's group", async () => {
    const ran: number[] = []
    const queueOf = () => {
      const queue = createJobQueue(database.handle, {
        pollingIntervalSeconds: 0.5,
        lockSeconds: 120,
        logger: pino({ level: 'silent' }),
      })
      queue.define({
        name: 'test.carried',
        retryDelaySeconds: 1,
        handle: async (data: { n: number }) => void ran.push(data.n),
      })
      return queue
    }
    const queue = queueOf()
    await queue.start({ runWorkers: true })
    try {
      // Waiting, retrying, and running with an expired lock (its instance gone): adopted. Running with a live
      // lock: left to the previous release's worker that holds it. Finished: left behind.
      await vi.waitFor(() => expect([...ran].sort()).toEqual([1, 2, 5]), { timeout: 15_000, interval: 100 })
      const { rows: versions } = await run('select version from jobs.version')
      expect((versions[0] as { version: number }).version).toBeGreaterThan(24)
      const { rows: groups } = await run(
        `select (data ->> 'n')::int as n, group_id from jobs.job where name = 'test.carried' order by n`,
      )
      expect(groups).toEqual([
        { n: 1, group_id: ACCOUNT },
        { n: 2, group_id: null },
        { n: 5, group_id: null },
      ])
      // The previous release's schema is untouched but for the jobs that left it: its instances still work there.
      const { rows: old } = await run(
        `select (data ->> 'n')::int as n, state::text from pgboss.job order by n`,
      )
      expect(old).toEqual([
        { n: 3, state: 'active' },
        { n: 4, state: 'completed' },
      ])
      const { rows: oldVersion } = await run('select version from pgboss.version')
      expect(oldVersion).toEqual([{ version: 24 }])
    } finally {
      await queue.stop()
    }
    // A job the previous release queues meanwhile is adopted too (here by the next start; every minute while
    // an instance runs), and nothing runs twice.
    await run(`insert into pgboss.job (name, data) values ('test.carried', '{"n": 6}')`)
    const again = queueOf()
    await again.start({ runWorkers: true })
    try {
      await vi.waitFor(() => expect([...ran].sort()).toEqual([1, 2, 5, 6]), {
        timeout: 15_000,
        interval: 100,
      })
    } finally {
      await again.stop()
    }
    expect([...ran].sort()).toEqual([1, 2, 5, 6])
  })
})
