import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { describe, expect } from 'vitest'
import { adminHeaders, freePort } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { rowsOf } from './rows.js'
import { inTransactionWithTimeout } from './transaction.js'
import { databaseWaitOf, EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS } from './waits.js'

const onPostgres = Boolean(process.env.DATABASE_URL)

// Short bounds, so that each wait is reached quickly; three connections, so that the pool can be filled.
test.override('appEnv', {
  DATABASE_STATEMENT_TIMEOUT_MS: '800',
  DATABASE_LOCK_TIMEOUT_MS: '300',
  DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: '400',
  DATABASE_CONNECTION_WAIT_MS: '500',
  DATABASE_POOL_SIZE: '3',
})

/** Another session on the test's database, as an operator's psql or a migration would be. */
async function otherSession(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => undefined)
  await client.connect()
  return client
}

const unavailableBody = {
  success: false,
  errno: 503,
  message: 'Service unavailable: the database did not answer in time',
  additional_info: { retry_after: 2 },
}

describe.skipIf(!onPostgres)('every wait on PostgreSQL has a bound (PostgreSQL only)', () => {
  test('a lock held on a table answers 503 with Retry-After on it, while other tables and readiness answer', async ({
    t,
    owner,
  }) => {
    const holder = await otherSession(t.database.url as string)
    try {
      await holder.query('begin')
      await holder.query('lock table contacts in access exclusive mode')
      const contacts = await t.app.inject({ url: '/v1/contacts', headers: owner.headers })
      expect(contacts.statusCode).toBe(503)
      expect(contacts.headers['retry-after']).toBe('2')
      expect(contacts.json()).toEqual(unavailableBody)
      const account = await t.app.inject({
        url: `/v1/admin/accounts/${owner.accountId}`,
        headers: adminHeaders,
      })
      expect(account.statusCode).toBe(200)
      expect((await t.app.inject({ url: '/status/ready' })).statusCode).toBe(200)
    } finally {
      await holder.end()
    }
    expect((await t.app.inject({ url: '/v1/contacts', headers: owner.headers })).statusCode).toBe(200)
  })

  test('a statement past DATABASE_STATEMENT_TIMEOUT_MS is cancelled', async ({ t }) => {
    const error = await t.app.platform.db.execute(sql`select pg_sleep(2)`).catch((e: unknown) => e)
    expect(databaseWaitOf(error)).toBe('statement')
  })

  test('exports and removals give their batches EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS instead', async ({
    t,
  }) => {
    const sleepy = sql`select pg_sleep(1.2), current_setting('statement_timeout') as timeout`
    const result = await inTransactionWithTimeout(
      t.app.platform.db,
      EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS,
      (tx) => tx.execute(sleepy),
    )
    expect(rowsOf<{ timeout: string }>(result)[0]?.timeout).toBe('1min')
    // The connection goes back to the pool with the API's bound.
    const after = await t.app.platform.db.execute(sql`select current_setting('statement_timeout') as timeout`)
    expect(rowsOf<{ timeout: string }>(after)[0]?.timeout).toBe('800ms')
  })

  test('a request that finds every pool connection taken answers 503 after DATABASE_CONNECTION_WAIT_MS', async ({
    t,
    owner,
  }) => {
    const pool = (t.app.platform.db as unknown as { $client: pg.Pool }).$client
    const taken = await Promise.all([pool.connect(), pool.connect(), pool.connect()])
    try {
      const response = await t.app.inject({ url: '/v1/contacts', headers: owner.headers })
      expect(response.statusCode).toBe(503)
      expect(response.headers['retry-after']).toBe('2')
    } finally {
      for (const client of taken) client.release()
    }
    expect((await t.app.inject({ url: '/v1/contacts', headers: owner.headers })).statusCode).toBe(200)
  })

  test('a transaction left idle is ended by the server, and the process lives on', async ({ t, owner }) => {
    const error = await t.app.platform.db
      .transaction(async (tx) => {
        await tx.execute(sql`select 1`)
        await sleep(1000)
        await tx.execute(sql`select 1`)
      })
      .catch((e: unknown) => e)
    expect(databaseWaitOf(error)).toBeDefined()
    expect((await t.app.inject({ url: '/v1/contacts', headers: owner.headers })).statusCode).toBe(200)
  })

  test('connections the server ends (a restart, a failover) cost at most a retried request', async ({
    t,
    owner,
  }) => {
    // Connections idle in the pool, and one checked out between two statements.
    await Promise.all([1, 2, 3].map(() => t.app.inject({ url: '/v1/contacts', headers: owner.headers })))
    const pool = (t.app.platform.db as unknown as { $client: pg.Pool }).$client
    const checkedOut = await pool.connect()
    const admin = await otherSession(t.database.url as string)
    try {
      await admin.query(
        'select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
      )
    } finally {
      await admin.end()
    }
    await expect(checkedOut.query('select 1')).rejects.toThrow()
    checkedOut.release(true)
    let status = 0
    for (let attempt = 0; attempt < 5 && status !== 200; attempt++) {
      const response = await t.app.inject({ url: '/v1/contacts', headers: owner.headers })
      status = response.statusCode
      if (status !== 200) expect(response.statusCode).toBe(503)
    }
    expect(status).toBe(200)
    expect((await t.app.inject({ url: '/status/ready' })).statusCode).toBe(200)
  })

  test('JIT is off on the service connections', async ({ t }) => {
    const result = await t.app.platform.db.execute(sql`select current_setting('jit') as jit`)
    expect(rowsOf<{ jit: string }>(result)[0]?.jit).toBe('off')
  })
})

describe('what a database error means', () => {
  test.each([
    [{ code: '57014' }, 'statement'],
    [{ code: '55P03' }, 'lock'],
    [{ code: '57P01' }, 'database'],
    [{ code: 'ECONNREFUSED' }, 'database'],
    [{ message: 'timeout exceeded when trying to connect' }, 'connection'],
    [{ code: '23505' }, undefined],
    [{ code: '22P02' }, undefined],
  ] as [{ code?: string; message?: string }, string | undefined][])('%o waited for %s', (fields, wait) => {
    const cause = Object.assign(new Error(fields.message ?? 'failed'), fields)
    // As Drizzle wraps it.
    expect(databaseWaitOf(new Error('Failed query', { cause }))).toBe(wait)
  })

  test('a provider that refused its connection is not the database', async () => {
    const closed = `http://127.0.0.1:${await freePort()}/`
    const refused = await fetch(closed).catch((error: unknown) => error)
    expect(databaseWaitOf(new Error(`GET ${closed} failed`, { cause: refused }))).toBeUndefined()
  })
})
