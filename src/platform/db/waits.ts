/**
 * Every wait on PostgreSQL has a bound (docs/decisions.md, "Every wait has a bound"): a held lock or a
 * database that does not answer costs a request a 503 with Retry-After, never a connection parked until
 * the client gives up, nor the pool that every other request needs.
 */
export interface DatabaseWaits {
  /** DATABASE_STATEMENT_TIMEOUT_MS: one statement of the API's (PostgreSQL's `statement_timeout`). */
  statementMs: number
  /** DATABASE_LOCK_TIMEOUT_MS: waiting for a lock a statement needs (`lock_timeout`), e.g. behind a migration. */
  lockMs: number
  /** DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_MS: a transaction left open with nothing running is ended. */
  idleInTransactionMs: number
  /** DATABASE_CONNECTION_WAIT_MS: waiting for a pool connection, or for a new connection to be made. */
  connectionMs: number
}

/**
 * The defaults: an API statement takes milliseconds (the volume bench's p99s at 20 M rows are under
 * 400 ms), so 3 s is far past any healthy one; a lock is given 1 s, so that requests behind a migration's or
 * a long writer's lock fail fast instead of holding every pool connection; with the pool's 2 s a request
 * waiting on the database answers within 5 s.
 */
export const DATABASE_WAIT_DEFAULTS: DatabaseWaits = {
  statementMs: 3000,
  lockMs: 1000,
  idleInTransactionMs: 10_000,
  connectionMs: 2000,
}

/**
 * An account's export and removal read or delete all of its rows, batch by batch, in the background of one
 * long request or job: each batch's statements get a minute, named here, instead of a request's 3 s.
 */
export const EXPORT_AND_REMOVAL_STATEMENT_TIMEOUT_MS = 60_000

/**
 * The server settings that carry the waits, sent when each connection starts (pg's connection options), and
 * JIT off: the planner's estimates at a large account's volume pass `jit_above_cost`, and compiling costs a
 * query that runs in 0.1 ms 14 ms or more (docs/decisions.md, "PostgreSQL's JIT on the service's connections").
 * Without waits (the seeding and bench tools, whose bulk statements run for minutes), nothing is bounded.
 */
export function connectionSettings(waits: DatabaseWaits | undefined) {
  return {
    options: '-c jit=off',
    ...(waits && {
      statement_timeout: waits.statementMs,
      lock_timeout: waits.lockMs,
      idle_in_transaction_session_timeout: waits.idleInTransactionMs,
      connectionTimeoutMillis: waits.connectionMs,
    }),
  }
}

export type ConnectionSettings = ReturnType<typeof connectionSettings>

/** What a request waited for when the database did not answer, for the log line and the 503. */
export type DatabaseWait = 'statement' | 'lock' | 'connection' | 'database'

/** SQLSTATEs that mean the database cannot serve now, not that the request is wrong. */
const UNAVAILABLE_STATES: Record<string, DatabaseWait> = {
  '57014': 'statement', // query_canceled: statement_timeout
  '55P03': 'lock', // lock_not_available: lock_timeout
  '25P03': 'statement', // idle_in_transaction_session_timeout
  '57P01': 'database', // admin_shutdown: the server is stopping
  '57P02': 'database', // crash_shutdown
  '57P03': 'database', // cannot_connect_now: starting up or shutting down
  '53300': 'connection', // too_many_connections
  '08000': 'database', // connection_exception and its subclasses
  '08001': 'database',
  '08003': 'database',
  '08004': 'database',
  '08006': 'database',
}

/** Node's socket errors on the way to PostgreSQL. */
const SOCKET_ERRORS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
])

/** pg's and pg-pool's own messages for a connection that could not be had or was lost. */
const CONNECTION_MESSAGES: [RegExp, DatabaseWait][] = [
  [/^timeout exceeded when trying to connect$/, 'connection'],
  [/^Connection terminated (unexpectedly|due to connection timeout)$/, 'database'],
  [/^Client has encountered a connection error and is not queryable$/, 'database'],
  [/^Client was closed and is not queryable$/, 'database'],
]

/**
 * What the database kept the caller waiting for, when `error` (wrapped by Drizzle or not) says it could not
 * serve in time or at all; undefined for any other error.
 */
export function databaseWaitOf(error: unknown): DatabaseWait | undefined {
  for (let e = error; e instanceof Error; e = e.cause) {
    // fetch (undici) wraps the socket error of a call to an outside provider: that one is not the database's.
    if (e instanceof TypeError && e.message === 'fetch failed') return undefined
    const { code } = e as { code?: unknown }
    if (typeof code === 'string') {
      if (code in UNAVAILABLE_STATES) return UNAVAILABLE_STATES[code]
      if (SOCKET_ERRORS.has(code)) return 'database'
    }
    for (const [pattern, wait] of CONNECTION_MESSAGES) if (pattern.test(e.message)) return wait
  }
  return undefined
}
