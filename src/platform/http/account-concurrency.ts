import type { FastifyInstance, FastifyReply, FastifyRequest, RouteHandlerMethod } from 'fastify'
import { TooManyRequests } from './errors.js'

/**
 * How a heavy route is bounded: the account a request counts for (by default the caller's,
 * `request.auth.account_id`), and which of its requests are heavy (by default all).
 */
export interface HeavyRoute {
  account?: (request: FastifyRequest) => string
  when?: (request: FastifyRequest) => boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A heavy route, bounded per account (account-concurrency.ts); set with `heavy()`. */
    heavy?: HeavyRoute
  }
}

/**
 * The route config of a heavy route (an export, statistics over a long range, a search, a room's whole
 * history): on each instance, at most ACCOUNT_HEAVY_CONCURRENCY of one account's heavy requests run at once,
 * so that one account cannot hold the instance's database pool. One more waits its turn for up to
 * ACCOUNT_HEAVY_WAIT_MS, as many as may run; past either bound it is answered 429 with `Retry-After: 1`.
 * E.g. `config: heavy()`, or `config: heavy({ when: (request) => … })` for some of a route's requests.
 */
export function heavy(route: HeavyRoute = {}): { heavy: HeavyRoute } {
  return { heavy: route }
}

/** An account's turns on an instance: ACCOUNT_CONCURRENCY and its wait, or the heavy routes' own. */
export interface TurnSettings {
  /** ACCOUNT_CONCURRENCY, ACCOUNT_HEAVY_CONCURRENCY */
  concurrency: number
  /** ACCOUNT_CONCURRENCY_WAIT_MS, ACCOUNT_HEAVY_WAIT_MS */
  waitMs: number
  /**
   * How many requests of all accounts together the instance runs before an account's share binds: below
   * that, the pool has room, and an account may run past its share (DATABASE_POOL_SIZE for every request).
   * 0, the default: the share always binds (heavy routes).
   */
  shared?: number
}

/** What an instance is running and holding back of one account's requests (of one bound). */
interface Turns {
  running: number
  waiting: number
}

/** A request waiting for a turn of its account's. */
interface Waiter {
  turns: Turns
  start: () => void
}

/** The seconds a refused request is told to wait: turns come back within seconds, not minutes. */
const RETRY_AFTER_SECONDS = 1

/**
 * A per-account bound of requests on this instance (all of an account's, or its heavy ones): the database
 * pool is the instance's own (DATABASE_POOL_SIZE), so a bound per instance is what keeps one account from
 * holding it. A request holds its turn until its handler is done and its response closed, so that a streamed
 * export holds it while it reads, and a client that goes away does not free a turn while the database still
 * works for it.
 */
export function createAccountConcurrency(settings: TurnSettings) {
  const turnsOf = new Map<string, Turns>()
  // Every account's waiting requests, first come first served.
  const queue: Waiter[] = []
  const shared = settings.shared ?? 0
  let running = 0
  const mayRun = (turns: Turns) => turns.running < settings.concurrency || running < shared
  const start = (turns: Turns) => {
    turns.running++
    running++
  }

  function leave(account: string, turns: Turns) {
    turns.running--
    running--
    // The freed turn goes to the oldest request that may run now: its account's, or any while the pool has room.
    for (let i = 0; i < queue.length; ) {
      const waiter = queue[i] as Waiter
      if (!mayRun(waiter.turns)) {
        i++
        continue
      }
      queue.splice(i, 1)
      waiter.turns.waiting--
      start(waiter.turns)
      waiter.start()
    }
    if (turns.running === 0 && turns.waiting === 0) turnsOf.delete(account)
  }

  /** The account's turns once the request may run (its turn taken); rejects with 429 when it may not. */
  function take(account: string): Turns | Promise<Turns> {
    let turns = turnsOf.get(account)
    if (!turns) {
      turns = { running: 0, waiting: 0 }
      turnsOf.set(account, turns)
    }
    if (mayRun(turns)) {
      start(turns)
      return turns
    }
    if (settings.waitMs === 0 || turns.waiting >= settings.concurrency)
      return Promise.reject(new TooManyRequests(RETRY_AFTER_SECONDS))
    const waiting = turns
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        turns: waiting,
        start: () => {
          clearTimeout(timer)
          resolve(waiting)
        },
      }
      const timer = setTimeout(() => {
        queue.splice(queue.indexOf(waiter), 1)
        waiting.waiting--
        reject(new TooManyRequests(RETRY_AFTER_SECONDS))
      }, settings.waitMs)
      waiting.waiting++
      queue.push(waiter)
    })
  }

  async function run(account: string, reply: FastifyReply, handler: () => unknown): Promise<unknown> {
    const taken = take(account)
    const turns = taken instanceof Promise ? await taken : taken
    // A client that left while it waited gets nothing run for it: its turn goes to the next at once. Its
    // connection tells: a request whose body was read whole is `destroyed` too, and must still be answered.
    if (taken instanceof Promise && reply.request.raw.socket?.destroyed) {
      leave(account, turns)
      return undefined
    }
    // Two things end a turn: the handler settled, and the response closed (sent, or the client gone).
    let ends = 2
    const end = () => {
      if (--ends === 0) leave(account, turns)
    }
    reply.raw.once('close', end)
    try {
      return await handler()
    } finally {
      end()
    }
  }

  return {
    run,
    /** How many of the account's requests of this bound run on this instance now (tests, metrics). */
    running: (account: string) => turnsOf.get(account)?.running ?? 0,
  }
}

export interface AccountConcurrencySettings {
  /** Every request authenticated as an account (ACCOUNT_CONCURRENCY, ACCOUNT_CONCURRENCY_WAIT_MS). */
  every: TurnSettings
  /** Heavy routes, within that (ACCOUNT_HEAVY_CONCURRENCY, ACCOUNT_HEAVY_WAIT_MS). */
  heavy: TurnSettings
}

/**
 * Bounds every route registered after this call: each request authenticated as an account holds a turn of
 * its account on the instance while it runs. Once the instance runs as many requests as its pool has
 * connections, an account runs at most ACCOUNT_CONCURRENCY at once, so that one account's requests (an
 * integration looping with many in flight) cannot hold the pool while another account's wait behind them;
 * below that, the pool has room and no one waits. Those whose config has `heavy` (see `heavy()`) also hold
 * one of its fewer heavy turns, which bind always. Handlers are wrapped, so that validation and
 * authentication come first and a refused request costs no turn.
 */
export function registerAccountConcurrency(app: FastifyInstance, settings: AccountConcurrencySettings): void {
  const every = createAccountConcurrency(settings.every)
  const heavyBound = createAccountConcurrency(settings.heavy)
  app.addHook('onRoute', (route) => {
    const handler = route.handler as RouteHandlerMethod
    const heavyRoute = (route.config as { heavy?: HeavyRoute } | undefined)?.heavy
    const accountOf = heavyRoute?.account ?? ((request: FastifyRequest) => request.auth.account_id)
    const bounded: RouteHandlerMethod = heavyRoute
      ? function heavyHandler(this: FastifyInstance, request, reply) {
          if (heavyRoute.when && !heavyRoute.when(request)) return handler.call(this, request, reply)
          return heavyBound.run(accountOf(request), reply, () => handler.call(this, request, reply))
        }
      : handler
    route.handler = function accountHandler(this: FastifyInstance, request, reply) {
      const account = request.auth?.account_id
      if (!account) return bounded.call(this, request, reply)
      return every.run(account, reply, () => bounded.call(this, request, reply))
    }
  })
}
