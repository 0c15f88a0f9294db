import type { FastifyReply } from 'fastify'
import type { Redis } from 'ioredis'
import type { Logger } from '../log/logger.js'
import { TooManyRequests } from './errors.js'

/**
 * The request budget of each account: how many requests authenticated as the account (platform JWTs and
 * OAuth access tokens alike) the service answers in a window, across instances, so that one account's
 * integration loop cannot take the service from the others. Past it, 429 in the error envelope with
 * `Retry-After`; every counted response carries the `RateLimit-Policy` and `RateLimit` fields of
 * draft-ietf-httpapi-ratelimit-headers-11 (structured-field lists), e.g.
 * `RateLimit-Policy: "account";q=6000;w=60` and `RateLimit: "account";r=5999;t=42`.
 *
 * Windows are fixed, `windowSeconds` long, and start at multiples of it since the epoch, so that every
 * instance agrees on the current one without asking. With Redis, an instance does not send a command per
 * request: it reserves a slice of the account's budget (a hundredth, at least 1 request) with one INCRBY
 * and admits requests from it in memory, synchronously, until it needs another. What instances reserved
 * and did not use is lost to the account at the window's end (at most a slice each). Without Redis, and
 * while Redis is down or a reservation fails, each instance counts alone: the budget fails open by the
 * number of instances, as the route limits do (docs/decisions.md, "What fails open without Redis").
 */
export interface AccountBudget {
  /**
   * Counts one request of the account against its budget (`own`, or the default when null), sets
   * RateLimit-Policy and RateLimit on the reply, and calls `done` with no error, or with TooManyRequests
   * past the budget. Synchronous unless this instance has to reserve from Redis first.
   */
  charge(reply: FastifyReply, accountId: string, own: number | null, done: (error?: Error) => void): void
}

export interface AccountBudgetOptions {
  /** Requests an account without a budget of its own may make in a window (ACCOUNT_REQUEST_BUDGET). */
  requests: number
  /** The window's length (ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS). */
  windowSeconds: number
  /** Where instances count together (REDIS_URL); each instance alone without it. */
  redis: Redis | undefined
  logger: Logger
}

/** ioredis's states of a connection lost and not yet made again (`connecting` is a first connection's). */
export const REDIS_DOWN = new Set(['reconnecting', 'close', 'end'])

/** The largest budget, the service's or an account's: a billion requests a window is no limit at all. */
export const MAX_REQUEST_BUDGET = 1_000_000_000

/** The policy's name in both fields. */
const POLICY = '"account"'

/** What one instance knows of an account in the current window. */
interface Window {
  /** Requests this instance admitted. */
  used: number
  /** Requests this instance reserved from Redis and was granted (in Redis only). */
  reserved: number
  /** Requests this instance asked Redis for, granted or not. */
  asked: number
  /** What the other instances had reserved when this one last reserved. */
  others: number
  /** The largest budget Redis granted this instance nothing under: no more is asked for unless it rises. */
  spentUnder: number
  /** The reservation under way, which requests that find no reserved request left wait for. */
  reserving: Promise<void> | undefined
}

/**
 * The requests an instance reserves from Redis at once: a hundredth of the budget, at least 1. So an account
 * costs at most about a hundred reservations a window on an instance however fast it calls, and what an
 * instance reserved and did not use at the window's end is at most 1 % of the budget.
 */
export const sliceOf = (budget: number) => Math.max(1, Math.floor(budget / 100))

export function createAccountBudget(options: AccountBudgetOptions): AccountBudget {
  const { redis, logger } = options
  const windowMs = options.windowSeconds * 1000
  // The windows of the current one only: all are replaced when it ends, so the maps hold the accounts seen
  // in one window at most, and forgetting costs nothing per request.
  let currentIndex = -1
  let shared = new Map<string, Window>()
  let local = new Map<string, Window>()
  const policies = new Map<number, string>()
  const policyOf = (budget: number) => {
    let policy = policies.get(budget)
    if (policy === undefined) {
      policy = `${POLICY};q=${budget};w=${options.windowSeconds}`
      // Budgets are few (the default and the accounts' own); bounded all the same.
      if (policies.size >= 1000) policies.clear()
      policies.set(budget, policy)
    }
    return policy
  }
  const windowIn = (windows: Map<string, Window>, accountId: string) => {
    let window = windows.get(accountId)
    if (!window) {
      window = { used: 0, reserved: 0, asked: 0, others: 0, spentUnder: 0, reserving: undefined }
      windows.set(accountId, window)
    }
    return window
  }

  /** Tells the client what is left; a negative `remaining` refuses the request. */
  function answer(
    reply: FastifyReply,
    remaining: number,
    resetSeconds: number,
    done: (error?: Error) => void,
  ) {
    if (remaining >= 0) {
      reply.header('ratelimit', `${POLICY};r=${remaining};t=${resetSeconds}`)
      return done()
    }
    reply.header('ratelimit', `${POLICY};r=0;t=${resetSeconds}`)
    done(new TooManyRequests(resetSeconds))
  }

  /** Counts the request in this instance's memory alone. */
  function countHere(
    reply: FastifyReply,
    accountId: string,
    budget: number,
    resetSeconds: number,
    done: (error?: Error) => void,
  ) {
    const window = windowIn(local, accountId)
    if (window.used >= budget) return answer(reply, -1, resetSeconds, done)
    window.used++
    answer(reply, budget - window.used, resetSeconds, done)
  }

  async function reserve(accountId: string, index: number, window: Window, budget: number) {
    const slice = sliceOf(budget)
    const key = `account-budget:${accountId}:${index}`
    // One round trip; the key outlives its window by a little, so that a late reservation still finds it.
    const results = await (redis as Redis)
      .pipeline()
      .incrby(key, slice)
      .pexpire(key, windowMs + 5000)
      .exec()
    const [error, total] = results?.[0] ?? [new Error('no reply')]
    if (error) throw error
    const everywhere = Number(total)
    const granted = Math.max(0, Math.min(slice, budget - (everywhere - slice)))
    window.asked += slice
    window.reserved += granted
    window.others = Math.max(window.others, everywhere - window.asked)
    if (granted === 0) window.spentUnder = Math.max(window.spentUnder, budget)
  }

  function charge(reply: FastifyReply, accountId: string, own: number | null, done: (error?: Error) => void) {
    const budget = own ?? options.requests
    const now = Date.now()
    const index = Math.floor(now / windowMs)
    if (index !== currentIndex) {
      currentIndex = index
      shared = new Map()
      local = new Map()
    }
    const resetSeconds = Math.max(1, Math.ceil(((index + 1) * windowMs - now) / 1000))
    reply.header('ratelimit-policy', policyOf(budget))
    // While Redis is known down, no request waits for a command to time out first.
    if (!redis || REDIS_DOWN.has(redis.status)) return countHere(reply, accountId, budget, resetSeconds, done)
    const window = windowIn(shared, accountId)
    // What the other instances reserved counts as made, so that a budget lowered within the window holds at once.
    if (window.others + window.used >= budget || budget <= window.spentUnder)
      return answer(reply, -1, resetSeconds, done)
    if (window.used < window.reserved) {
      window.used++
      return answer(reply, budget - window.others - window.used, resetSeconds, done)
    }
    window.reserving ??= reserve(accountId, index, window, budget).finally(() => {
      window.reserving = undefined
    })
    window.reserving.then(
      () => charge(reply, accountId, own, done),
      (error: unknown) => {
        logger.debug({ err: error }, 'account budget: counted on this instance, Redis did not answer')
        countHere(reply, accountId, budget, resetSeconds, done)
      },
    )
  }

  return { charge }
}
