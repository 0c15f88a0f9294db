import { mkdtempSync, readFileSync } from 'node:fs'
import { get as httpGet } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { io } from 'socket.io-client'
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { EXPORT_BATCH } from '../src/modules/rooms/export.service.js'
import { migrateDatabase, openDatabase } from '../src/platform/db/connection.js'
import { adminHeaders, TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './helpers/app.js'
import { addUser, createAccount, createTenant, type Tenant } from './helpers/fixtures.js'
import {
  type PrivatePostgres,
  type PrivateRedis,
  startPrivatePostgres,
  startPrivateRedis,
  startPrivateStandby,
} from './helpers/private-services.js'
import { createGroup, ROOMS } from './helpers/rooms.js'

/**
 * Reads on streaming replicas (issue: reads beyond one database): a private primary and `pg_basebackup -R`
 * standbys of it, started from the machine's binaries, and two instances of the service sharing a private
 * Redis. Each standby logs every statement it runs, which is how a read is known to have been the replica's.
 * PostgreSQL run only: the embedded database has no replicas.
 */

const onPostgres = Boolean(process.env.DATABASE_URL)
const METRICS_TOKEN = 'replica-metrics-token-0123'

/** Statements a replica ran on the contacts table, from its own log. */
function contactReadsOn(replica: PrivatePostgres): number {
  return readFileSync(replica.logFile, 'utf8')
    .split('\n')
    .filter((line) => /(execute|statement).*\bfrom "?contacts"?/i.test(line)).length
}

async function onServer<T>(url: string, text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query(text)).rows as T[]
  } finally {
    await client.end()
  }
}

describe.skipIf(!onPostgres)('reads on streaming replicas (PostgreSQL run only)', () => {
  let primary: PrivatePostgres
  /** Every commit reaches it 400 ms late: the WAL before a commit is replayed at once, the commit then. */
  let delayed: PrivatePostgres
  let first: PrivatePostgres
  let second: PrivatePostgres
  let redis: PrivateRedis
  const instances: FastifyInstance[] = []

  beforeAll(async () => {
    primary = await startPrivatePostgres()
    const handle = await openDatabase({ databaseUrl: primary.url })
    await migrateDatabase(handle, { databaseUrl: primary.url })
    await handle.close()
    const logged = ['log_statement=all']
    ;[delayed, first, second] = await Promise.all([
      startPrivateStandby(primary, [...logged, 'recovery_min_apply_delay=400ms']),
      startPrivateStandby(primary, logged),
      startPrivateStandby(primary, logged),
    ])
    redis = await startPrivateRedis()
  }, 120_000)

  afterEach(async () => {
    await Promise.all(instances.splice(0).map((app) => app.close()))
    for (const replica of [first, second]) {
      try {
        replica.start()
      } catch {
        // Running already: only the last test stops one.
      }
      await onServer(replica.url, 'select pg_wal_replay_resume()')
    }
  }, 30_000)

  afterAll(async () => {
    await redis?.stop()
    for (const cluster of [delayed, first, second, primary]) cluster?.destroy()
  })

  /** An instance of the service as a server builds it, on the private primary, its replicas and Redis. */
  async function instance(replicas: PrivatePostgres[], env: Record<string, string> = {}) {
    const config = loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'replica-reads-')),
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      DATABASE_URL: primary.url,
      DATABASE_REPLICA_URLS: replicas.map((replica) => replica.url).join(','),
      DATABASE_POOL_SIZE: '4',
      REDIS_URL: redis.url,
      ACCOUNT_CONCURRENCY: '1000',
      ...env,
    })
    const app = await buildApp(config)
    instances.push(app)
    await app.ready()
    return app
  }

  type ReplicaView = { name: string; state: string; lag_ms: number | null }

  async function replicasOf(app: FastifyInstance): Promise<ReplicaView[]> {
    const response = await app.inject({ url: '/status/ready' })
    expect(response.statusCode).toBe(200)
    return response.json().replicas
  }

  const nameOf = (replica: PrivatePostgres) => `127.0.0.1:${replica.port}/postgres`

  async function until(app: FastifyInstance, replica: PrivatePostgres, state: string, timeout = 10_000) {
    await vi.waitFor(
      async () => {
        const view = (await replicasOf(app)).find((each) => each.name === nameOf(replica))
        expect(view?.state).toBe(state)
      },
      { timeout, interval: 100 },
    )
  }

  async function createContact(app: FastifyInstance, tenant: Tenant, email: string): Promise<string> {
    const response = await app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: tenant.headers,
      payload: { email, name: email },
    })
    expect(response.statusCode).toBe(201)
    return response.json().data._id
  }

  async function readContact(app: FastifyInstance, tenant: Tenant, id: string) {
    return app.inject({ url: `/v1/contacts/${id}`, headers: tenant.headers })
  }

  it('a contact created through one instance is found at once through another, though the replica lags every commit', async () => {
    const [writer, reader] = [await instance([delayed]), await instance([delayed])]
    await until(reader, delayed, 'in rotation')
    const tenant = await createTenant(writer)
    for (let i = 0; i < 3; i++) {
      const email = `fresh-${i}@example.com`
      const id = await createContact(writer, tenant, email)
      const listed = await reader.inject({ url: `/v1/contacts?search=${email}`, headers: tenant.headers })
      expect(listed.json().data.map((contact: { _id: string }) => contact._id)).toEqual([id])
      // Read through the 400 ms the replica holds the commit back, while it has replayed all before it: a
      // position taken before the commit would be one it holds, and a read sent to it would miss the contact.
      for (let read = 0; read < 12; read++) {
        expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
        await sleep(50)
      }
    }
    // Once the replica has replayed them, the account's reads are the replica's.
    const id = await createContact(writer, tenant, 'replayed@example.com')
    await sleep(1000)
    const before = contactReadsOn(delayed)
    for (let i = 0; i < 5; i++) expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
    expect(contactReadsOn(delayed) - before).toBeGreaterThanOrEqual(5)
  })

  it("a room's export reads every batch on the replica its request chose", async () => {
    const [writer, reader] = [await instance([first]), await instance([first])]
    const owner = await createTenant(writer)
    const colleague = await addUser(writer, owner.accountId, 'Grace Hopper')
    const room = await createGroup(writer, owner, [colleague])
    // Three batches of the export's, written as a worker would (no session of the reader's records them).
    const messages = 2 * EXPORT_BATCH + 10
    await onServer(
      primary.url,
      `with room as (select last_seq from rooms where id = '${room._id}')
       insert into room_messages (id, account_id, room_id, seq, sender_id, content)
       select substr(md5(random()::text || n), 1, 24), '${owner.accountId}', '${room._id}', room.last_seq + n,
         '${owner.conversationId}', 'message ' || n || repeat(' words', 400)
       from room, generate_series(1, ${messages}) as n;
       update rooms set last_seq = last_seq + ${messages} where id = '${room._id}'`,
    )
    await until(reader, first, 'in rotation')
    await sleep(2500)
    const batchesOn = () =>
      readFileSync(first.logFile, 'utf8')
        .split('\n')
        .filter((line) => /(execute|statement).*\bfrom "?room_messages"?/i.test(line)).length
    const before = batchesOn()
    // Over HTTP, read slowly: the 5 MB body fills the connection, and the stream asks for each next batch
    // when the socket drains; the request's choice of replica holds there too (the async context carries it).
    const address = await reader.listen({ host: '127.0.0.1', port: 0 })
    const body = await new Promise<string>((resolve, reject) => {
      const request = httpGet(
        `${address}${ROOMS}/${room._id}/export`,
        { headers: owner.headers },
        (response) => {
          const chunks: Buffer[] = []
          response.pause()
          setTimeout(() => response.resume(), 500)
          response.on('data', (chunk: Buffer) => chunks.push(chunk))
          response.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')))
          response.on('error', reject)
        },
      )
      request.on('error', reject)
    })
    expect(JSON.parse(body).data.total_messages).toBeGreaterThanOrEqual(messages)
    expect(batchesOn() - before).toBe(3)
  })

  it("the operator's pages read on a replica, and the operator's own writes at once", async () => {
    const [writer, reader] = [await instance([delayed]), await instance([delayed])]
    await until(reader, delayed, 'in rotation')
    const accountsOn = () =>
      readFileSync(delayed.logFile, 'utf8')
        .split('\n')
        .filter((line) => /(execute|statement).*\bfrom "?accounts"?/i.test(line)).length
    const accountId = await createAccount(writer, { name: 'Fresh agency' })
    const read = () => reader.inject({ url: `/v1/admin/accounts/${accountId}`, headers: adminHeaders })
    // The delayed replica holds the account 400 ms later: until then the operator reads it on the primary.
    expect((await read()).statusCode).toBe(200)
    await sleep(1000)
    const before = accountsOn()
    for (let i = 0; i < 5; i++) expect((await read()).statusCode).toBe(200)
    expect(accountsOn() - before).toBeGreaterThanOrEqual(5)
  })

  it("the Socket.IO handshake's lookups read on a replica", async () => {
    const [writer, reader] = [await instance([first]), await instance([first])]
    const tenant = await createTenant(writer)
    await until(reader, first, 'in rotation')
    await sleep(1000)
    const standingsOn = () =>
      (readFileSync(first.logFile, 'utf8').match(/execute account_standing/g) ?? []).length
    const before = standingsOn()
    const address = await reader.listen({ host: '127.0.0.1', port: 0 })
    const socket = io(address, { auth: { token: tenant.token }, transports: ['websocket'], forceNew: true })
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve)
        socket.once('connect_error', reject)
      })
    } finally {
      socket.close()
    }
    expect(standingsOn()).toBeGreaterThan(before)
  })

  it('an account reads its write on the replica that replayed it, never on one that did not', async () => {
    // A bound that keeps the paused replica in rotation: only the account's own position keeps it away.
    const env = { DATABASE_REPLICA_MAX_LAG_MS: '60000' }
    const [writer, reader] = [await instance([first, second], env), await instance([first, second], env)]
    const [tenant, other] = [await createTenant(writer), await createTenant(writer)]
    await until(reader, first, 'in rotation')
    await until(reader, second, 'in rotation')
    await sleep(1000)
    await onServer(second.url, 'select pg_wal_replay_pause()')
    const onSecond = contactReadsOn(second)
    const id = await createContact(writer, tenant, 'sticky@example.com')
    // The first replica catches up (until the reader has seen it replay the write, reads go to the primary);
    // the account's reads must still never go to the second.
    const caughtUp = contactReadsOn(first)
    await vi.waitFor(
      async () => {
        expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
        expect(contactReadsOn(first)).toBeGreaterThan(caughtUp)
      },
      { timeout: 10_000, interval: 100 },
    )
    const onFirst = contactReadsOn(first)
    for (let i = 0; i < 20; i++) expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
    expect(contactReadsOn(second)).toBe(onSecond)
    expect(contactReadsOn(first) - onFirst).toBeGreaterThanOrEqual(20)
    // Another account, which wrote nothing since, reads on either: the paused replica is still in rotation.
    for (let i = 0; i < 20; i++) {
      const listed = await reader.inject({ url: '/v1/contacts', headers: other.headers })
      expect(listed.statusCode).toBe(200)
    }
    expect(contactReadsOn(second)).toBeGreaterThan(onSecond)
  })

  it('a paused replica leaves the rotation once it lags past the bound, reads stay fresh, and it comes back', async () => {
    const env = { DATABASE_REPLICA_MAX_LAG_MS: '1000', METRICS_TOKEN: METRICS_TOKEN }
    const [writer, reader] = [await instance([first], env), await instance([first], env)]
    const tenant = await createTenant(writer)
    await until(reader, first, 'in rotation')
    await onServer(first.url, 'select pg_wal_replay_pause()')
    // Written by a worker or a provider's webhook: no session of the reader's records it.
    const [inserted] = await onServer<{ id: string }>(
      primary.url,
      `insert into contacts (id, account_id, email, name, phone)
       values (substr(md5(random()::text), 1, 24), '${tenant.accountId}', 'behind@example.com', 'Behind', '')
       returning id`,
    )
    const id = inserted?.id as string
    await until(reader, first, 'lagging')
    const lag = (await replicasOf(reader)).find((each) => each.name === nameOf(first))?.lag_ms
    expect(lag).toBeGreaterThan(1000)
    const metrics = await reader.inject({
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    const label = `{replica="${nameOf(first)}"}`
    expect(metrics.body).toContain(`database_replica_in_rotation${label} 0`)
    expect(metrics.body).toMatch(
      new RegExp(`database_replica_lag_seconds${label.replace(/[{}.]/g, '\\$&')} [1-9]`),
    )
    const before = contactReadsOn(first)
    expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
    expect(contactReadsOn(first)).toBe(before)
    await onServer(first.url, 'select pg_wal_replay_resume()')
    await until(reader, first, 'in rotation')
    await sleep(2500)
    expect((await readContact(reader, tenant, id)).statusCode).toBe(200)
    expect(contactReadsOn(first)).toBeGreaterThan(before)
  })

  it('a replica killed while it serves costs no request, and leaves the rotation', async () => {
    const [writer, reader] = [await instance([first, second]), await instance([first, second])]
    const tenant = await createTenant(writer)
    const id = await createContact(writer, tenant, 'steady@example.com')
    await until(reader, second, 'in rotation')
    await sleep(1000)
    const statuses: number[] = []
    let reading = true
    const load = (async () => {
      while (reading) {
        const answers = await Promise.all([reader, writer].map((app) => readContact(app, tenant, id)))
        statuses.push(...answers.map((answer) => answer.statusCode))
      }
    })()
    await sleep(500)
    second.stop('immediate')
    await sleep(1500)
    reading = false
    await load
    expect(statuses.length).toBeGreaterThan(20)
    expect(statuses.filter((status) => status !== 200)).toEqual([])
    await until(reader, second, 'unreachable')
    expect((await reader.inject({ url: '/status/ready' })).statusCode).toBe(200)
    // Started again, it answers and has caught up: back in the rotation without a restart of the service.
    second.start()
    await until(reader, second, 'in rotation', 20_000)
  })

  it('a URL that is no replica (the primary itself) never serves reads', async () => {
    const app = await instance([primary])
    const tenant = await createTenant(app)
    await until(app, primary, 'not a replica')
    const id = await createContact(app, tenant, 'primary@example.com')
    expect((await readContact(app, tenant, id)).statusCode).toBe(200)
    const ready = await app.inject({ url: '/status/ready' })
    expect(ready.json().replicas).toEqual([{ name: nameOf(primary), state: 'not a replica', lag_ms: null }])
  })
})
