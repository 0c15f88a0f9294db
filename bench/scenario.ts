import type { ChildProcess } from 'node:child_process'
import type { SqlRecorder } from './sql-recording.js'

/**
 * What the TLS proxy in front of a production server adds to each request it forwards. Production requires
 * HTTPS on the authorization and webhook endpoints (docs/decisions.md, "HTTPS in production"); the bench's
 * server trusts a proxy on loopback (TRUST_PROXY, servers.ts), so the requests the bench sends carry this, as
 * they would arrive from one.
 */
export const VIA_TLS_PROXY = { 'x-forwarded-proto': 'https' } as const

/** The one request a scenario repeats on every connection. */
export interface BenchRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Path and query, e.g. `/v1/e/changelog/posts?page=2`. */
  path: string
  headers?: Record<string, string>
  /**
   * Headers each connection sends in turn instead of `headers` (which the first request, captured for the
   * baseline, still uses): e.g. the tokens of several apps, each under its own hourly allowance. Every one
   * must get the same answer.
   */
  headersInTurn?: Record<string, string>[]
  body?: string
  /**
   * For a request that cannot be sent twice (a fresh event id, its signature, a rotating token): what each
   * request, the first included, changes of the fields above, made just before it is sent.
   */
  next?: () => RequestChange
  /** Told every answer, e.g. to keep the refresh token it carries for a later request. */
  onAnswer?: (status: number, body: string) => void
}

/** What one request of a run changes from its `BenchRequest`. */
export interface RequestChange {
  path?: string
  headers?: Record<string, string>
  body?: string
}

/**
 * Environment the server needs beyond the bench's own (e.g. the keys OAuth needs in production). A function
 * when it depends on something the scenario starts first, such as a fake provider whose URL the server is
 * given: called once, just before the server starts (what it starts, it stops through `registerStop`).
 */
export type ServerEnv = Record<string, string> | (() => Promise<Record<string, string>>)

/** The running server as a scenario sees it while preparing. */
export interface Target {
  baseUrl: string
  adminToken: string
  /** The server's own PostgreSQL database (`--postgres`); undefined on the embedded PGlite. */
  databaseUrl?: string
  /** The server's process (its CPU time is reported). */
  pid?: number
  /** The server's process itself: its IPC channel reaches what a scenario preloads (`memory-probe.mjs`). */
  process?: ChildProcess
  /** Every instance, this one first, of a scenario that starts several (`instances`). */
  instances?: Target[]
  /** The server's pool of PostgreSQL connections (DATABASE_POOL_SIZE, as src/config.ts reads it). */
  databasePoolSize: number
  /** Records the SQL of chosen requests (a scenario with `replaysSql`, on PostgreSQL only). */
  sql?: SqlRecorder
}

/** A request repeated by autocannon, compared with the bare node:http baseline answering the same bytes. */
export interface ComparedScenario {
  /** One line: what the request exercises. */
  description: string
  /** The least server/baseline ratio of req/s that passes. */
  target: number
  /** The least ratio of req/s to the bare Fastify route answering the same bytes and headers that passes. */
  frameworkTarget?: number
  /** Creates what the request needs (accounts, users, tokens) through the admin API. */
  prepare(target: Target): Promise<BenchRequest>
  /** Environment the server needs beyond the bench's own (e.g. the keys OAuth needs in production). */
  serverEnv?: ServerEnv
  /** Seeds the server's database directly, which only PostgreSQL allows beside the server. */
  requiresPostgres?: boolean
}

/** How hard a run drives the server: `--connections` and `--duration`. */
export interface LoadOptions {
  connections: number
  durationSeconds: number
}

/** The options of a run that a measured scenario reads. */
export interface MeasureOptions extends LoadOptions {
  /** `--requests`: how many requests to send; undefined leaves the scenario's default. */
  requests: number | undefined
  /** The scenario's own options (`flags`), by name, as given on the command line. */
  flags: Record<string, string | undefined>
}

/** Options of the command line that only one scenario reads, e.g. `--sockets-per-instance 200`. */
export interface ScenarioFlags {
  /** The flags' names, without `--`; each takes a value. */
  names: string[]
  /** A line for the bench's usage. */
  usage: string
  /** Throws a UsageError (options.ts) for a value the scenario refuses. */
  check(values: Record<string, string | undefined>): void
}

/** What a measured scenario found: printed as it is, then judged like a comparison. */
export interface Measured {
  /** The report's lines after the scenario's heading. */
  lines: string[]
  /** Met its own target; false prints BELOW, which does not fail the run. */
  passed: boolean
  /** The figures are not valid (errors, non-2xx, lost or doubled work): the run fails. */
  failed: boolean
}

/**
 * A workload no baseline can answer (work that goes on after the response, such as jobs): the scenario
 * drives the server itself and measures what it needs to.
 */
export interface MeasuredScenario {
  description: string
  /** Reads or writes the server's database directly, which only PostgreSQL allows beside the server. */
  requiresPostgres?: boolean
  /** Environment the server needs beyond the bench's own (e.g. the mail provider whose records it writes). */
  serverEnv?: ServerEnv
  /**
   * Compares the route with its own SQL replayed through pg without HTTP (sql-replay.ts): the server is
   * started with the SQL recorder, given to `measure` as `target.sql`.
   */
  replaysSql?: boolean
  /** How many instances of the server to start, sharing one database and the run's secrets (default 1). */
  instances?: number
  flags?: ScenarioFlags
  measure(target: Target, options: MeasureOptions): Promise<Measured>
}

export type Scenario = ComparedScenario | MeasuredScenario

export const isMeasured = (scenario: Scenario): scenario is MeasuredScenario => 'measure' in scenario
