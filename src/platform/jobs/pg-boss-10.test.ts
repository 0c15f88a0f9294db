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
        ('test.carried', '{"n": 4}', 'completed', now());`)
  })
  afterAll(async () => {
    await database.drop()
  })

  it("moves it aside, and runs the jobs it still held once each (a running one again), in the account's group", async () => {
    const ran: number[] = []
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
    await queue.start({ runWorkers: true })
    try {
      await vi.waitFor(() => expect([...ran].sort()).toEqual([1, 2, 3]), { timeout: 15_000, interval: 100 })
      const { rows: versions } = await run('select version from pgboss.version')
      expect(versions).toEqual([{ version: expect.any(Number) }])
      expect((versions[0] as { version: number }).version).toBeGreaterThan(24)
      const { rows: groups } = await run(
        `select (data ->> 'n')::int as n, group_id from pgboss.job where name = 'test.carried' order by n`,
      )
      expect(groups).toEqual([
        { n: 1, group_id: ACCOUNT },
        { n: 2, group_id: null },
        { n: 3, group_id: null },
      ])
      // The old schema stays, with what it held, until the operator drops it.
      const { rows: old } = await run('select count(*)::int as jobs from pgboss_v10.job')
      expect(old).toEqual([{ jobs: 4 }])
    } finally {
      await queue.stop()
    }
    // A second start finds pg-boss 12's schema and copies nothing again.
    const again = createJobQueue(database.handle, {
      pollingIntervalSeconds: 0.5,
      lockSeconds: 120,
      logger: pino({ level: 'silent' }),
    })
    again.define({ name: 'test.carried', handle: async (data: { n: number }) => void ran.push(data.n) })
    await again.start({ runWorkers: true })
    await again.stop()
    expect([...ran].sort()).toEqual([1, 2, 3])
  })
})
