import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import pg from 'pg'
import { io, type Socket } from 'socket.io-client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, freePort, TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './helpers/app.js'
import { addUser, createTenant, type Tenant } from './helpers/fixtures.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'
import {
  type PrivatePostgres,
  type PrivateRedis,
  startPrivatePostgres,
  startPrivateRedis,
} from './helpers/private-services.js'
import { type WatchedProcess, watchProcess } from './helpers/processes.js'
import { createGroup, ROOMS } from './helpers/rooms.js'
import { serverClient } from './helpers/server-client.js'

/**
 * The service rides through its database and Redis failing (issue: a week in production): a compiled server
 * on a private PostgreSQL cluster and Redis server, under a steady load of reads and writes, while each is
 * stopped, killed or locked and brought back. PostgreSQL run only: the embedded database cannot fail apart
 * from the process.
 */

/** What every request may answer while a dependency is away, and the longest it may take. */
const ANSWERED = [200, 201, 503]
const LONGEST_ANSWER_MS = 5000
/** How soon after a dependency's return writes succeed again, without a restart. */
const RECOVERY_MS = 5000
/** The steady load: one request every 50 ms (20 a second), written and read in turn. */
const LOAD_INTERVAL_MS = 50

interface Outcome {
  /** `neighbour`: another account's read of its own room, which no fault of the owner's may slow. */
  kind: 'write' | 'read' | 'other-table' | 'neighbour'
  status: number | 'no answer'
  ms: number
  retryAfter?: string
  email?: string
}

interface FaultFigures {
  fault: string
  requests: number
  byStatus: Record<string, number>
  longestMs: number
  readyDuring: number
  writesBackInMs: number
  socketsBackInMs: number
}

const onPostgres = Boolean(process.env.DATABASE_URL)

describe.skipIf(!onPostgres)('the service through PostgreSQL and Redis failing (PostgreSQL run only)', () => {
  let postgres: PrivatePostgres
  let redis: PrivateRedis
  const servers: WatchedProcess[] = []
  let dataDir: string
  let client: ReturnType<typeof serverClient>
  let owner: Tenant
  let colleague: Tenant
  let roomId: string
  let neighbour: Tenant
  let neighbourRoomId: string
  let socket: Socket
  const received: string[] = []
  const acknowledged: string[] = []
  const figures: FaultFigures[] = []

  /** The compiled server as `npm start` runs it, on the private PostgreSQL and Redis; its base URL. */
  async function startServer(): Promise<string> {
    const port = await freePort()
    const server = watchProcess(
      spawn(process.execPath, ['--enable-source-maps', join(PROJECT_ROOT, 'dist/main.js')], {
        cwd: dataDir,
        env: {
          PATH: process.env.PATH,
          NODE_ENV: 'development',
          HOST: '127.0.0.1',
          PORT: String(port),
          DATA_DIR: dataDir,
          DATABASE_URL: postgres.url,
          REDIS_URL: redis.url,
          ADMIN_TOKEN: TEST_ADMIN_TOKEN,
          JWT_SECRET: TEST_JWT_SECRET,
          JOBS_POLLING_INTERVAL_SECONDS: '0.5',
          LOG_LEVEL: 'warn',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    )
    servers.push(server)
    await server.printed('listening on', 60_000)
    return `http://127.0.0.1:${port}`
  }

  beforeAll(async () => {
    ;[postgres, redis] = await Promise.all([startPrivatePostgres(), startPrivateRedis()])
    dataDir = mkdtempSync(join(tmpdir(), 'faults-'))
    // Two instances: the load goes to the first, the member's socket is on the second, so that each message
    // crosses Redis (the Socket.IO adapter) as it does between a fleet's instances.
    const [first, second] = [await startServer(), await startServer()]
    client = serverClient(first, LONGEST_ANSWER_MS + 5000)
    owner = await createTenant(client.asApp, { name: 'Steady' })
    colleague = await addUser(client.asApp, owner.accountId, 'Grace Hopper')
    // One email a fault, for the check that jobs run again.
    await client.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${owner.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 20 },
    })
    roomId = (await createGroup(client.asApp, owner, [colleague]))._id
    neighbour = await createTenant(client.asApp, { name: 'Neighbour' })
    const neighbourColleague = await addUser(client.asApp, neighbour.accountId, 'Alan Turing')
    neighbourRoomId = (await createGroup(client.asApp, neighbour, [neighbourColleague]))._id
    socket = io(second, { auth: { token: colleague.token }, transports: ['websocket'], forceNew: true })
    socket.on('message:new', (data: { message?: { content?: string } }) => {
      received.push(data.message?.content ?? '')
    })
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('connect_error', reject)
    })
  }, 120_000)

  afterAll(async () => {
    socket?.disconnect()
    for (const server of servers) {
      if (server.child.exitCode !== null) continue
      server.child.kill('SIGKILL')
      await server.exited
    }
    await redis?.stop()
    postgres?.destroy()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    if (figures.length > 0)
      console.log(`${formatFigures(figures)}\n${acknowledged.length} writes acknowledged`)
  })

  /** One request of the steady load, timed, never throwing: a reset or a hang is recorded as 'no answer'. */
  async function call(kind: Outcome['kind']): Promise<Outcome> {
    const started = Date.now()
    const email = kind === 'write' ? `steady-${randomBytes(6).toString('hex')}@example.com` : undefined
    const request =
      kind === 'write'
        ? { method: 'POST', url: '/v1/contacts', headers: owner.headers, payload: { email, name: 'Steady' } }
        : kind === 'read'
          ? { url: '/v1/contacts?limit=5', headers: owner.headers }
          : kind === 'other-table'
            ? { url: `${ROOMS}/${roomId}/messages?limit=5`, headers: owner.headers }
            : { url: `${ROOMS}/${neighbourRoomId}/messages?limit=5`, headers: neighbour.headers }
    try {
      const response = await client.inject(request)
      if (kind === 'write' && response.statusCode === 201) acknowledged.push(email as string)
      return {
        kind,
        status: response.statusCode,
        ms: Date.now() - started,
        retryAfter: response.headers['retry-after'],
        email,
      }
    } catch {
      return { kind, status: 'no answer', ms: Date.now() - started, email }
    }
  }

  /** The steady load until `stop` is called: a request every LOAD_INTERVAL_MS whatever the answers take. */
  function steadyLoad() {
    const calls: Promise<Outcome>[] = []
    const kinds: Outcome['kind'][] = ['write', 'read', 'other-table', 'neighbour']
    const timer = setInterval(
      () => calls.push(call(kinds[calls.length % kinds.length] as Outcome['kind'])),
      LOAD_INTERVAL_MS,
    )
    return {
      stop: async () => {
        clearInterval(timer)
        return Promise.all(calls)
      },
    }
  }

  /** How long after now a write first succeeds, polling every 100 ms (Infinity past twice the bound). */
  async function msUntilWritesSucceed(): Promise<number> {
    const started = Date.now()
    while (Date.now() - started < 2 * RECOVERY_MS) {
      if ((await call('write')).status === 201) return Date.now() - started
      await sleep(100)
    }
    return Number.POSITIVE_INFINITY
  }

  async function readinessStatus(): Promise<number> {
    return (await client.inject({ url: '/status/ready' })).statusCode
  }

  /**
   * After a fault: room messages reach the member's socket on the other instance again within RECOVERY_MS
   * of the dependency's return. One is posted every 250 ms until one arrives: a message published while an
   * instance's Redis subscriber is still reconnecting is not delivered across instances (Redis pub/sub keeps
   * nothing), which a client recovers from by reading the room's messages. Returns how long it took.
   */
  async function msUntilSocketDelivery(label: string, since: number): Promise<number> {
    const posted: string[] = []
    while (Date.now() - since < 2 * RECOVERY_MS) {
      const content = `after ${label} ${randomBytes(3).toString('hex')}`
      const response = await client.inject({
        method: 'POST',
        url: `${ROOMS}/${roomId}/messages`,
        headers: owner.headers,
        payload: { content },
      })
      if (response.statusCode === 201) posted.push(content)
      await sleep(250)
      if (posted.some((sent) => received.includes(sent))) return Date.now() - since
    }
    return Number.POSITIVE_INFINITY
  }

  /** After a fault: a delivery event posted now is applied by its job (jobs resumed). */
  async function expectJobsRun(label: string) {
    const sent = await client.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/mail',
      headers: { ...owner.headers, 'idempotency-key': `faults-${label}-${randomBytes(3).toString('hex')}` },
      payload: {
        subject: 'Hello',
        origin: 'faults',
        sender: { email: 'team@agency.example', name: 'Agency' },
        recipients: [{ email: 'ada@example.com', name: 'Ada' }],
        content: [{ type: 'text/plain', value: 'Hello' }],
      },
    })
    expect(sent.statusCode, sent.body).toBe(200)
    const { _id: id, msgID } = sent.json().data as { _id: string; msgID: string }
    const event = await client.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/webhook',
      payload: [
        {
          email: 'ada@example.com',
          timestamp: Math.floor(Date.now() / 1000),
          event: 'open',
          sg_event_id: `open-${label}-${id}`,
          sg_message_id: `${msgID}.filter0001`,
        },
      ] as unknown as object,
    })
    expect(event.statusCode, event.body).toBe(200)
    let events: unknown[] = []
    for (let waited = 0; waited < 15_000 && events.length === 0; waited += 250) {
      await sleep(250)
      const read = await client.inject({
        url: `/v1/e/mailprovider/communications/${id}`,
        headers: owner.headers,
      })
      events = (read.json().data?.events as unknown[]) ?? []
    }
    expect(events.length, 'the delivery event was applied by its job').toBeGreaterThan(0)
  }

  /**
   * Runs the steady load through `fault` (which returns once the dependency is back), then checks what the
   * issue asks of every fault: the process up, every request answered in time (503 with Retry-After where
   * it needed what was away), writes and socket events across instances again within RECOVERY_MS of its
   * return, jobs running.
   */
  async function throughFault(
    name: string,
    fault: (sampleReadiness: () => Promise<void>) => Promise<void>,
    /** Answers this fault may give besides ANSWERED, each with Retry-After as a 503 must. */
    alsoAnswered: number[] = [],
  ): Promise<{ outcomes: Outcome[]; readyDuring: number[] }> {
    const load = steadyLoad()
    await sleep(500)
    const readyDuring: number[] = []
    await fault(async () => void readyDuring.push(await readinessStatus()))
    const back = Date.now()
    const writesBackInMs = await msUntilWritesSucceed()
    const socketsBackInMs = await msUntilSocketDelivery(name, back)
    await sleep(500)
    const outcomes = await load.stop()
    for (const server of servers) expect(server.child.exitCode, server.output()).toBeNull()
    const byStatus: Record<string, number> = {}
    for (const { status } of outcomes) byStatus[status] = (byStatus[status] ?? 0) + 1
    figures.push({
      fault: name,
      requests: outcomes.length,
      byStatus,
      longestMs: Math.max(...outcomes.map((o) => o.ms)),
      readyDuring: readyDuring.filter((status) => status === 200).length,
      writesBackInMs,
      socketsBackInMs,
    })
    const answered = [...ANSWERED, ...alsoAnswered]
    expect(outcomes.filter((o) => !answered.includes(o.status as number))).toEqual([])
    expect(outcomes.filter((o) => o.ms > LONGEST_ANSWER_MS)).toEqual([])
    expect(outcomes.filter((o) => (o.status === 503 || o.status === 429) && !o.retryAfter)).toEqual([])
    expect(writesBackInMs).toBeLessThanOrEqual(RECOVERY_MS)
    expect(socketsBackInMs).toBeLessThanOrEqual(RECOVERY_MS)
    await expectJobsRun(name.replace(/\W+/g, '-'))
    return { outcomes, readyDuring }
  }

  /** A fault: `takeAway` the dependency, readiness sampled halfway through `ms`, then `bringBack`. */
  const awayFor =
    (ms: number, takeAway: () => unknown, bringBack: () => unknown) =>
    async (sampleReadiness: () => Promise<void>) => {
      await takeAway()
      await sleep(ms / 2)
      await sampleReadiness()
      await sleep(ms / 2)
      await bringBack()
    }

  it('PostgreSQL stopped for 15 s and started again', async () => {
    const stopped = awayFor(
      15_000,
      () => postgres.stop('fast'),
      () => postgres.start(),
    )
    const { readyDuring } = await throughFault('PostgreSQL stopped 15 s', stopped)
    expect(readyDuring).toEqual([503])
  }, 90_000)

  it('PostgreSQL killed hard (immediate) for 10 s', async () => {
    const killed = awayFor(
      10_000,
      () => postgres.stop('immediate'),
      () => postgres.start(),
    )
    const { readyDuring } = await throughFault('PostgreSQL killed 10 s', killed)
    expect(readyDuring).toEqual([503])
  }, 90_000)

  it("a lock held on contacts for 20 s: readiness, the account's other tables while it has turns, and its neighbours keep answering", async () => {
    const holder = new pg.Client({ connectionString: postgres.url })
    await holder.connect()
    const locked = awayFor(
      20_000,
      async () => {
        await holder.query('begin')
        await holder.query('lock table contacts in access exclusive mode')
      },
      async () => {
        await holder.query('rollback')
        await holder.end()
      },
    )
    // The account's requests to contacts wait on the lock with their connections; once they hold the whole pool,
    // the account's share of it binds, and its next requests, to any table, are answered 429 with Retry-After
    // (account-concurrency.ts). Its requests to other tables answer 200 while it has turns; another account's
    // requests always do: the lock costs the account that waits on it, not its neighbours.
    const { outcomes, readyDuring } = await throughFault('lock on contacts 20 s', locked, [429])
    expect(readyDuring).toEqual([200])
    expect(
      outcomes.filter((o) => o.kind === 'other-table' && ![200, 429].includes(o.status as number)),
    ).toEqual([])
    expect(outcomes.filter((o) => o.kind === 'other-table' && o.status === 200).length).toBeGreaterThan(0)
    expect(outcomes.filter((o) => o.kind === 'neighbour' && o.status !== 200)).toEqual([])
  }, 90_000)

  it('Redis stopped for 15 s: reads and writes go on', async () => {
    const stopped = awayFor(
      15_000,
      () => redis.stop(),
      () => redis.start(),
    )
    const { outcomes, readyDuring } = await throughFault('Redis stopped 15 s', stopped)
    expect(readyDuring).toEqual([503])
    expect(outcomes.filter((o) => o.status !== 200 && o.status !== 201)).toEqual([])
  }, 90_000)

  it('PostgreSQL and Redis stopped together for 15 s', async () => {
    const stopped = awayFor(
      15_000,
      async () => {
        await redis.stop()
        postgres.stop('fast')
      },
      async () => {
        postgres.start()
        await redis.start()
      },
    )
    const { readyDuring } = await throughFault('both stopped 15 s', stopped)
    expect(readyDuring).toEqual([503])
  }, 90_000)

  it('lost no acknowledged write, and applied none twice', async () => {
    const check = new pg.Client({ connectionString: postgres.url })
    await check.connect()
    try {
      const { rows } = await check.query<{ email: string; copies: number }>(
        `select email, count(*)::int as copies from contacts
         where account_id = $1 and email like 'steady-%' group by email`,
        [owner.accountId],
      )
      const copies = new Map(rows.map((row) => [row.email, row.copies]))
      expect(acknowledged.length).toBeGreaterThan(100)
      expect(acknowledged.filter((email) => copies.get(email) !== 1)).toEqual([])
      expect(rows.filter((row) => row.copies > 1)).toEqual([])
    } finally {
      await check.end()
    }
  })
})

function formatFigures(figures: FaultFigures[]): string {
  const lines = figures.map(
    (f) =>
      `| ${f.fault} | ${f.requests} | ${Object.entries(f.byStatus)
        .map(([status, count]) => `${status}: ${count}`)
        .join(
          ', ',
        )} | ${f.longestMs} ms | ${f.readyDuring} | ${f.writesBackInMs} ms | ${f.socketsBackInMs} ms |`,
  )
  return [
    '| Fault | Requests | Answers | Longest | Ready during (samples) | Writes back after | Socket events back after |',
    '|---|---|---|---|---|---|---|',
    ...lines,
  ].join('\n')
}
