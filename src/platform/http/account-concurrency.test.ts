import { request } from 'node:http'
import { Readable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import pg from 'pg'
import { afterEach, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant } from '../../../test/helpers/fixtures.js'
import { heavy, registerAccountConcurrency, type TurnSettings } from './account-concurrency.js'
import { registerErrorHandling } from './error-handler.js'

/**
 * Heavy routes (exports, statistics, searches, a room's whole history) run at most
 * ACCOUNT_HEAVY_CONCURRENCY of one account's requests at once on an instance; one more waits its turn for up
 * to ACCOUNT_HEAVY_WAIT_MS, as many as may run, and is answered 429 with Retry-After past either bound.
 */

interface Held {
  release: () => void
}

/** A small service whose heavy routes answer when the test releases them. */
async function heavyApp(settings: TurnSettings, every: TurnSettings = { concurrency: 1000, waitMs: 0 }) {
  const held: Held[] = []
  const hold = () =>
    new Promise<void>((resolve) => {
      held.push({ release: resolve })
    })
  const app = Fastify()
  registerErrorHandling(app)
  registerAccountConcurrency(app, { every, heavy: settings })
  // The caller's account, as `authenticate` sets it.
  app.decorateRequest('auth', null as unknown as FastifyRequest['auth'])
  app.addHook('onRequest', async (request) => {
    // A request without the header is a public route's: no account.
    const account = request.headers['x-account']
    if (typeof account === 'string') request.auth = { uid: 'u', account_id: account, parent_account: null }
  })
  app.get('/search', { config: heavy({ when: (request) => 'q' in (request.query as object) }) }, async () => {
    await hold()
    return { found: true }
  })
  // A streamed body, which the database keeps producing after the handler returned.
  let stream: Readable | undefined
  app.get('/export', { config: heavy() }, async (_request, reply) => {
    stream = new Readable({ read() {} })
    return reply.type('text/plain').send(stream)
  })
  app.get('/light', async () => ({ light: true }))
  // A write that answers 201 itself, as most of the service's do.
  app.post('/write', async (_request, reply) => {
    await hold()
    return reply.status(201).send({ written: true })
  })
  // Requests that reached their handler's bound (the last hook runs right before it).
  let entered = 0
  app.addHook('preHandler', async () => {
    entered++
  })
  await app.ready()
  const get = (url: string, account = 'a') => app.inject({ url, headers: { 'x-account': account } })
  const post = (url: string, account = 'a') =>
    app.inject({ method: 'POST', url, headers: { 'x-account': account } })
  /** Resolves once `count` requests are held in their handlers. */
  const held_ = async (count: number) => {
    while (held.length < count) await new Promise((resolve) => setImmediate(resolve))
  }
  return {
    app,
    held,
    get,
    post,
    heldCount: held_,
    stream: () => stream as Readable,
    handlersEntered: () => entered,
  }
}

const apps: FastifyInstance[] = []
afterEach(async () => {
  for (const app of apps.splice(0)) await app.close()
})

describe('the concurrency bound of heavy routes', () => {
  it("refuses an account's request past its bound with 429 and Retry-After, and no one else's", async () => {
    const s = await heavyApp({ concurrency: 1, waitMs: 0 })
    apps.push(s.app)
    const first = s.get('/search?q=x')
    await s.heldCount(1)
    const refused = await s.get('/search?q=y')
    expect(refused.statusCode).toBe(429)
    expect(refused.json()).toStrictEqual({
      success: false,
      errno: 429,
      message: 'Too many requests',
      additional_info: { retry_after: 1 },
    })
    expect(refused.headers['retry-after']).toBe('1')
    // Another account's heavy request, the same account's light requests and its requests the route does not
    // count heavy run meanwhile.
    const other = s.get('/search?q=z', 'b')
    await s.heldCount(2)
    expect((await s.get('/light')).statusCode).toBe(200)
    const notHeavy = s.get('/search')
    await s.heldCount(3)
    for (const { release } of s.held) release()
    expect((await first).statusCode).toBe(200)
    expect((await other).statusCode).toBe(200)
    expect((await notHeavy).statusCode).toBe(200)
    // Its turn is free again.
    const again = s.get('/search?q=x')
    await s.heldCount(4)
    s.held[3]?.release()
    expect((await again).statusCode).toBe(200)
  })

  it('lets one more wait its turn, as many as may run, and refuses the next at once', async () => {
    const s = await heavyApp({ concurrency: 1, waitMs: 60_000 })
    apps.push(s.app)
    const first = s.get('/search?q=1')
    await s.heldCount(1)
    let waitingAnswered = false
    const waiting = s.get('/search?q=2').then((answer) => {
      waitingAnswered = true
      return answer
    })
    // The third finds the queue full: refused without waiting.
    expect((await s.get('/search?q=3')).statusCode).toBe(429)
    expect(waitingAnswered).toBe(false)
    expect(s.held).toHaveLength(1)
    s.held[0]?.release()
    expect((await first).statusCode).toBe(200)
    // The waiting one has its turn now.
    await s.heldCount(2)
    s.held[1]?.release()
    expect((await waiting).statusCode).toBe(200)
  })

  it('refuses a request that waited ACCOUNT_HEAVY_WAIT_MS without a turn', async () => {
    const s = await heavyApp({ concurrency: 1, waitMs: 20 })
    apps.push(s.app)
    const first = s.get('/search?q=1')
    await s.heldCount(1)
    const waited = await s.get('/search?q=2')
    expect(waited.statusCode).toBe(429)
    expect(waited.headers['retry-after']).toBe('1')
    s.held[0]?.release()
    expect((await first).statusCode).toBe(200)
  })

  it('runs nothing for a client that left while it waited', async () => {
    const s = await heavyApp({ concurrency: 1, waitMs: 60_000 })
    apps.push(s.app)
    await s.app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = s.app.server.address() as { port: number }
    const first = s.get('/search?q=1')
    await s.heldCount(1)
    // A real client, gone before its turn comes.
    const serverSideClosed = new Promise((resolve) =>
      s.app.server.once('connection', (socket) => socket.once('close', resolve)),
    )
    const leaving = request({ host: '127.0.0.1', port, path: '/search?q=2', headers: { 'x-account': 'a' } })
    leaving.on('error', () => {})
    leaving.end()
    while (s.handlersEntered() < 2) await new Promise((resolve) => setImmediate(resolve))
    await new Promise((resolve) => setImmediate(resolve))
    leaving.destroy()
    await serverSideClosed
    s.held[0]?.release()
    expect((await first).statusCode).toBe(200)
    // The turn went on without running the gone client's search: the next one runs at once.
    const next = s.get('/search?q=3')
    await s.heldCount(2)
    s.held[1]?.release()
    expect((await next).statusCode).toBe(200)
    expect(s.held).toHaveLength(2)
  })

  it('holds the turn while a streamed response is still being sent', async () => {
    const s = await heavyApp({ concurrency: 1, waitMs: 0 })
    apps.push(s.app)
    const exporting = s.get('/export')
    while (!s.stream()) await new Promise((resolve) => setImmediate(resolve))
    const stream = s.stream()
    stream.push('first line\n')
    // The handler has returned; the response is not done.
    expect((await s.get('/export')).statusCode).toBe(429)
    stream.push(null)
    const exported = await exporting
    expect(exported.statusCode).toBe(200)
    expect(exported.body).toBe('first line\n')
    const next = s.get('/export')
    while (s.stream() === stream) await new Promise((resolve) => setImmediate(resolve))
    s.stream().push(null)
    expect((await next).statusCode).toBe(200)
  })
})

/**
 * The real routes, on PostgreSQL: a contact search held by a lock on the contacts table holds its account's
 * turn, so that the account's next search is refused while another account's runs.
 */
describe("every request of an account: ACCOUNT_CONCURRENCY at once, so that it cannot hold the instance's pool", () => {
  it("makes the account's next request wait its turn, then run, while another account's run at once", async () => {
    const s = await heavyApp({ concurrency: 4, waitMs: 0 }, { concurrency: 1, waitMs: 60_000 })
    apps.push(s.app)
    const address = await s.app.listen({ host: '127.0.0.1', port: 0 })
    const first = s.post('/write')
    await s.heldCount(1)
    let waitingAnswered = false
    // Over HTTP, with a body: once read whole, its request stream is done (destroyed) while it waits.
    const waiting = fetch(`${address}/write`, {
      method: 'POST',
      headers: { 'x-account': 'a', 'content-type': 'application/json' },
      body: '{"text":"a body read whole before its turn"}',
    }).then((answer) => {
      waitingAnswered = true
      return answer
    })
    while (s.handlersEntered() < 2) await new Promise((resolve) => setImmediate(resolve))
    // The queue holds as many as may run: the account's third is refused at once, light as it is.
    const refused = await s.get('/light')
    expect(refused.statusCode).toBe(429)
    expect(refused.headers['retry-after']).toBe('1')
    // Another account's request is not held behind the first account's: it reaches its handler at once.
    const other = s.post('/write', 'b')
    await s.heldCount(2)
    expect(waitingAnswered).toBe(false)
    s.held[0]?.release()
    s.held[1]?.release()
    expect((await first).statusCode).toBe(201)
    expect((await other).statusCode).toBe(201)
    // The one that waited runs now, and answers what its handler sent.
    await s.heldCount(3)
    s.held[2]?.release()
    const waited = await waiting
    expect(waited.status).toBe(201)
    expect(await waited.json()).toStrictEqual({ written: true })
  })

  it('lets an account run past its share while the pool has room, and not once it is full', async () => {
    // A pool of 3 (`shared`), a share of 1.
    const s = await heavyApp({ concurrency: 4, waitMs: 0 }, { concurrency: 1, waitMs: 60_000, shared: 3 })
    apps.push(s.app)
    const a = [s.post('/write'), s.post('/write'), s.post('/write')]
    await s.heldCount(3)
    // The pool is full: the account's fourth waits, while another account's first runs, within its share.
    const fourth = s.post('/write')
    const other = s.post('/write', 'b')
    await s.heldCount(4)
    expect(s.handlersEntered()).toBe(5)
    // One of the account's ends: still as many run as the pool has, so its fourth goes on waiting.
    s.held[0]?.release()
    expect((await a[0])?.statusCode).toBe(201)
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve))
    expect(s.held).toHaveLength(4)
    // The other account's ends too: the pool has room again, and the fourth runs.
    s.held[3]?.release()
    expect((await other).statusCode).toBe(201)
    await s.heldCount(5)
    for (const { release } of s.held) release()
    for (const answer of [...a.slice(1), fourth]) expect((await answer)?.statusCode).toBe(201)
  })

  it('refuses one that waited ACCOUNT_CONCURRENCY_WAIT_MS without a turn; requests without an account are not counted', async () => {
    const s = await heavyApp({ concurrency: 4, waitMs: 0 }, { concurrency: 1, waitMs: 20 })
    apps.push(s.app)
    const first = s.post('/write')
    await s.heldCount(1)
    expect((await s.get('/light')).statusCode).toBe(429)
    s.held[0]?.release()
    expect((await first).statusCode).toBe(201)
    expect((await s.get('/light')).statusCode).toBe(200)
    // Requests without an account (a public route's) take no turn: two run at once.
    const publicWrites = [1, 2].map(() => s.app.inject({ method: 'POST', url: '/write' }))
    await s.heldCount(3)
    for (const { release } of s.held) release()
    for (const answer of publicWrites) expect((await answer).statusCode).toBe(201)
  })
})

/**
 * `contacts` locked from another connection, so that the service's requests reading it wait (holding their
 * turns) until the test releases it.
 */
async function lockContacts(connectionString: string | undefined) {
  const locker = new pg.Client({ connectionString })
  await locker.connect()
  await locker.query('begin')
  await locker.query('lock table contacts in access exclusive mode')
  const waiting = async () =>
    (
      await locker.query(
        "select count(*)::int as n from pg_locks where relation = 'contacts'::regclass and not granted",
      )
    ).rows[0].n as number
  return {
    /** Resolves once `count` requests wait on the lock. */
    untilWaiting: async (count: number) => {
      while ((await waiting()) < count) await new Promise((resolve) => setTimeout(resolve, 10))
    },
    release: () => locker.query('rollback'),
    end: () => locker.end(),
  }
}

describe.runIf(process.env.DATABASE_URL)('account turns and heavy routes in the service', () => {
  let t: TestApp | undefined
  afterEach(async () => {
    await t?.close()
    t = undefined
  })

  it("bounds every request of an account once the pool is full, whatever its route, and no other account's", async () => {
    // The held lists wait on a lock longer than the tests' default lock_timeout would let them.
    t = await buildTestApp({
      DATABASE_POOL_SIZE: '2',
      ACCOUNT_CONCURRENCY: '1',
      ACCOUNT_CONCURRENCY_WAIT_MS: '0',
      DATABASE_LOCK_TIMEOUT_MS: '30000',
      DATABASE_STATEMENT_TIMEOUT_MS: '30000',
    })
    const app = t.app
    const owner = await createTenant(app)
    const other = await createTenant(app)
    const changelog = (headers: { authorization: string }) =>
      app.inject({ url: '/v1/e/changelog/posts', headers })
    const lock = await lockContacts(t.database.url)
    try {
      // The pool has room for two: the account runs past its share of one until it is full.
      const held = [
        app.inject({ url: '/v1/contacts', headers: owner.headers }),
        app.inject({ url: '/v1/contacts', headers: owner.headers }),
      ]
      await lock.untilWaiting(2)
      // Now the account's next request, of any route, is refused at once.
      const refused = await changelog(owner.headers)
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['retry-after']).toBe('1')
      // Another account's is not: within its share, it waits for a connection like any request.
      const others = changelog(other.headers)
      await lock.release()
      expect((await others).statusCode).toBe(200)
      for (const answer of held) expect((await answer).statusCode).toBe(200)
      expect((await changelog(owner.headers)).statusCode).toBe(200)
    } finally {
      await lock.end()
    }
  })

  it('bounds contact searches per account, and not the contact list without a search', async () => {
    // The held search waits on a lock longer than the tests' default lock_timeout would let it.
    t = await buildTestApp({
      ACCOUNT_HEAVY_CONCURRENCY: '1',
      ACCOUNT_HEAVY_WAIT_MS: '0',
      DATABASE_LOCK_TIMEOUT_MS: '30000',
      DATABASE_STATEMENT_TIMEOUT_MS: '30000',
    })
    const app = t.app
    const owner = await createTenant(app)
    const other = await createTenant(app)
    const search = (headers: { authorization: string }) =>
      app.inject({ url: '/v1/contacts?search=ada', headers })
    const lock = await lockContacts(t.database.url)
    try {
      const held = search(owner.headers)
      // Its turn is taken once it waits on the lock.
      await lock.untilWaiting(1)
      const refused = await search(owner.headers)
      expect(refused.statusCode).toBe(429)
      expect(refused.headers['retry-after']).toBe('1')
      // The contact list without a search is not a heavy request.
      const list = app.inject({ url: '/v1/contacts', headers: owner.headers })
      await lock.release()
      expect((await held).statusCode).toBe(200)
      expect((await list).statusCode).toBe(200)
      expect((await search(owner.headers)).statusCode).toBe(200)
      expect((await search(other.headers)).statusCode).toBe(200)
    } finally {
      await lock.end()
    }
  })
})
