import pg from 'pg'
import { type EachRequest, percentile, type SentEach } from './each.js'
import { median } from './report.js'
import { type Target, VIA_TLS_PROXY } from './scenario.js'
import type { RecordedRequest } from './sql-recording.js'
import {
  type PlannedReplay,
  planReplays,
  type Replayed,
  type ReplayKind,
  replay,
  routeStatements,
} from './sql-replay.js'

/**
 * A database-bound scenario's route beside its physical limit: its own SQL replayed through pg with no
 * HTTP around it (sql-replay.ts), in the same run, in alternating rounds of as many requests each, as the
 * compared scenarios alternate with their baseline.
 */

const ROUNDS = 5
const CAPTURE_TIMEOUT_MS = 15_000

/**
 * The requests to record, sent once each through the server with the recorder on: three of each kind, of
 * which the replays follow the last two that sent the same statements (a cache may still fill on the first).
 */
export interface RecordSide {
  /** The run's URL (the one postEach posts to) and content type. */
  url: string
  contentType: string
  recorded: Record<string, EachRequest[]>
  /** A request's inputs as they reach SQL, in the same order for every request of a kind (requestInputs). */
  inputs(request: EachRequest): string[]
}

/** The replays to make of the recorded kinds, none of them sent to the server: the warm-up's first. */
export interface ReplaySide {
  replays: { kind: string; inputs: string[] }[]
  warmupReplays: number
  /** The scenario's HTTP connections: as many replays run at once. */
  connections: number
}

/** What a scenario gives to compare its route with its SQL, recorded and planned at once. */
export interface SqlSide extends RecordSide, Omit<ReplaySide, 'replays'> {
  replays: { kind: string; request: EachRequest }[]
}

/** The recorded requests of each kind, and the server's answers to them. */
export interface Recorded {
  kinds: Record<string, ReplayKind>
  /** Every recorded request's answer, in the order sent. */
  answers: Record<string, string[]>
  /** Which two of a kind's recorded requests the replays follow (the first is their template). */
  pairs: Record<string, [number, number]>
  /** How many requests the server answered while recording (they count as the scenario's own). */
  requests: number
}

/** The replays planned from the recordings, and the pool they run on. */
export interface SqlPlan {
  pool: pg.Pool
  poolSize: number
  connections: number
  recorded: Recorded
  /** Every replay, the warm-up's first, with the values it gives the recorded ones. */
  planned: PlannedReplay[]
  warmup: PlannedReplay[]
  timed: PlannedReplay[]
  end(): Promise<void>
}

function leaves(value: unknown): string[] {
  if (typeof value === 'string' || typeof value === 'number') return [String(value)]
  if (Array.isArray(value)) return value.flatMap(leaves)
  if (value && typeof value === 'object') return Object.values(value).flatMap(leaves)
  return []
}

/**
 * What a request brings that may reach SQL as it is, in a fixed order: its path's segments, its query's
 * values, its body's (JSON leaves, or form fields).
 */
export function requestInputs(request: EachRequest): string[] {
  const url = new URL(request.path ?? '/', 'http://bench')
  const body = (() => {
    if (!request.body) return []
    try {
      return leaves(JSON.parse(request.body))
    } catch {
      return [...new URLSearchParams(request.body).values()]
    }
  })()
  return [...url.pathname.split('/').filter(Boolean), ...url.searchParams.values(), ...body]
}

async function sendRecorded(target: Target, side: RecordSide, request: EachRequest, label: string) {
  const sql = target.sql
  if (!sql) throw new Error('the server was started without the SQL recorder')
  const url = new URL(request.path ?? '', side.url)
  const response = await fetch(url, {
    method: request.method ?? 'POST',
    headers: {
      'content-type': side.contentType,
      ...VIA_TLS_PROXY,
      ...request.headers,
      ...sql.headers(label),
    },
    ...(request.method !== 'GET' && { body: request.body }),
    signal: AbortSignal.timeout(CAPTURE_TIMEOUT_MS),
  })
  const answer = await response.text()
  if (!response.ok) throw new Error(`recording "${label}": ${response.status} ${answer.slice(0, 200)}`)
  return { recorded: await sql.read(label), answer }
}

/**
 * Sends the requests of each kind with the recorder on (the server answers them as any other, after the
 * warm-up, its caches filled) and reads what it sent; undefined without the recorder (PGlite, whose SQL
 * runs inside the server). The recorder stays on: `stopRecording` takes it out.
 */
export async function recordRequests(target: Target, side: RecordSide): Promise<Recorded | undefined> {
  if (!target.sql) return undefined
  const recorded: Recorded = { kinds: {}, answers: {}, pairs: {}, requests: 0 }
  for (const [kind, requests] of Object.entries(side.recorded)) {
    const sent = []
    for (const [i, request] of requests.entries())
      sent.push(await sendRecorded(target, side, request, `${kind}-${i + 1}`))
    recorded.requests += sent.length
    recorded.answers[kind] = sent.map((s) => s.answer)
    const pair = lastPair(sent.map((s) => s.recorded))
    if (!pair) {
      const names = sent.map((s) =>
        routeStatements(s.recorded)
          .map((st) => st.name ?? st.text.slice(0, 40))
          .join(', '),
      )
      throw new Error(`no two recorded "${kind}" requests sent the same statements: ${names.join('; then ')}`)
    }
    const [a, b] = pair
    recorded.pairs[kind] = pair
    recorded.kinds[kind] = {
      recorded: [sent[a]?.recorded, sent[b]?.recorded] as [RecordedRequest, RecordedRequest],
      inputs: [side.inputs(requests[a] as EachRequest), side.inputs(requests[b] as EachRequest)],
    }
  }
  return recorded
}

/** The last two recorded requests that sent the same statements. */
function lastPair(recordings: RecordedRequest[]): [number, number] | undefined {
  const texts = recordings.map((r) =>
    routeStatements(r)
      .map((s) => s.text)
      .join('\n;\n'),
  )
  for (let b = texts.length - 1; b > 0; b--) {
    for (let a = b - 1; a >= 0; a--) if (texts[a] === texts[b]) return [a, b]
  }
  return undefined
}

/** Takes the recorder out of the server, so that nothing is wrapped while the clock runs. */
export const stopRecording = (target: Target) => target.sql?.stop()

/** Every replay of the recorded kinds, built before the clock starts, and the pool they run on. */
export function planFrom(target: Target, recorded: Recorded, side: ReplaySide): SqlPlan {
  if (!target.databaseUrl) throw new Error('the SQL is replayed on PostgreSQL only')
  const planned = planReplays(recorded.kinds, side.replays)
  // The server's pool bounds its concurrent statements; fewer HTTP connections bound them more.
  const poolSize = Math.min(side.connections, target.databasePoolSize)
  const pool = new pg.Pool({ connectionString: target.databaseUrl, max: poolSize })
  return {
    pool,
    poolSize,
    connections: side.connections,
    recorded,
    planned,
    warmup: planned.slice(0, side.warmupReplays),
    timed: planned.slice(side.warmupReplays),
    end: () => pool.end(),
  }
}

/** Records the requests of each kind, takes the recorder out, and plans the replays (recordRequests). */
export async function planSql(target: Target, side: SqlSide): Promise<SqlPlan | undefined> {
  const recorded = await recordRequests(target, side)
  stopRecording(target)
  if (!recorded) return undefined
  const replays = side.replays.map(({ kind, request }) => ({ kind, inputs: side.inputs(request) }))
  return planFrom(target, recorded, { ...side, replays })
}

export interface RouteAgainstSql {
  route: SentEach
  sql?: Replayed
  /** Route req/s over SQL-only req/s of each round, sorted. */
  roundRatios: number[]
}

function chunks<T>(items: T[], count: number): T[][] {
  const size = Math.ceil(items.length / count)
  return Array.from({ length: count }, (_, i) => items.slice(i * size, (i + 1) * size)).filter(
    (c) => c.length,
  )
}

function mergeSent(parts: SentEach[]): SentEach {
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b)
  return {
    seconds: parts.reduce((sum, p) => sum + p.seconds, 0),
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    latencies,
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
    answers: parts.flatMap((p) => p.answers),
  }
}

function mergeReplayed(parts: Replayed[]): Replayed {
  return {
    requests: parts.reduce((sum, p) => sum + p.requests, 0),
    seconds: parts.reduce((sum, p) => sum + p.seconds, 0),
    latencies: parts.flatMap((p) => p.latencies).sort((a, b) => a - b),
    errors: parts.reduce((sum, p) => sum + p.errors, 0),
    firstError: parts.find((p) => p.firstError)?.firstError,
  }
}

/**
 * The timed requests: all at once without a plan; with one, in ROUNDS rounds alternating the route and as
 * many replays of its SQL (after the replays' own warm-up), so that a change of load falls on both.
 * `settle`, untimed, runs after every round: work a round leaves behind (jobs) then slows neither the next
 * round nor the other side.
 */
export async function routeAgainstSql(
  requests: EachRequest[],
  send: (requests: EachRequest[]) => Promise<SentEach>,
  plan: SqlPlan | undefined,
  settle: () => Promise<unknown> = async () => undefined,
): Promise<RouteAgainstSql> {
  if (!plan) return { route: await send(requests), roundRatios: [] }
  const warmup = await replay(plan.pool, plan.warmup, plan.connections)
  await settle()
  const routeRounds: SentEach[] = []
  const sqlRounds: Replayed[] = []
  const replays = chunks(plan.timed, ROUNDS)
  for (const [i, chunk] of chunks(requests, ROUNDS).entries()) {
    routeRounds.push(await send(chunk))
    await settle()
    sqlRounds.push(await replay(plan.pool, replays[i] ?? [], plan.connections))
    await settle()
  }
  const roundRatios = routeRounds
    .map((r, i) => {
      const s = sqlRounds[i]
      return s && s.seconds > 0 ? r.answers.length / r.seconds / (s.requests / s.seconds) : 0
    })
    .sort((a, b) => a - b)
  const sql = mergeReplayed(sqlRounds)
  // A warm-up replay that failed did not write what the route's did either: the run's checks would differ.
  sql.errors += warmup.errors
  sql.firstError ??= warmup.firstError
  return { route: mergeSent(routeRounds), sql, roundRatios }
}

/** Whether the route holds at least `target` of its SQL's rate (always, when the SQL was not measured). */
export const meetsSqlTarget = (compared: RouteAgainstSql, target: number) =>
  !compared.sql || median(compared.roundRatios) >= target

const perSecond = (count: number, seconds: number) => (seconds > 0 ? count / seconds : 0).toFixed(0)

/** The report's lines on the SQL-only side: its figures, the ratio, and what was replayed. */
export function sqlLines(compared: RouteAgainstSql, plan: SqlPlan | undefined, target?: number): string[] {
  if (!plan || !compared.sql) return ['SQL only: not measured (PGlite runs inside the server: --postgres)']
  const { sql, route } = compared
  const ratio = median(compared.roundRatios)
  const limit =
    plan.poolSize < plan.connections
      ? `the server's pool of ${plan.poolSize}, fewer than the ${plan.connections} HTTP connections`
      : `the ${plan.connections} HTTP connections, no more than the server's pool`
  const verdict = target === undefined ? '' : `   target >= ${target}   ${ratio >= target ? 'PASS' : 'BELOW'}`
  return [
    `SQL only: ${sql.requests} replays in ${sql.seconds.toFixed(2)} s   ${perSecond(sql.requests, sql.seconds)}/s   ` +
      `p50 ${percentile(sql.latencies, 0.5).toFixed(1)} ms, p99 ${percentile(sql.latencies, 0.99).toFixed(1)} ms   ` +
      `errors ${sql.errors}${sql.firstError ? ` (${sql.firstError})` : ''}`,
    `  through pg on ${plan.poolSize} connections (${limit}), ${plan.connections} concurrent replays`,
    `route/SQL-only: ${ratio.toFixed(2)} (median of ${compared.roundRatios.length} rounds, ` +
      `from ${(compared.roundRatios[0] ?? 0).toFixed(2)} to ${(compared.roundRatios.at(-1) ?? 0).toFixed(2)}; ` +
      `route ${perSecond(route.answers.length, route.seconds)}/s against ${perSecond(sql.requests, sql.seconds)}/s)${verdict}`,
    ...Object.entries(plan.recorded.kinds).flatMap(([kind, { recorded }]) =>
      recordedLines(kind, recorded[0]),
    ),
  ]
}

/** One recorded request: what it sent, and how long the server and its SQL took for it (unloaded). */
function recordedLines(kind: string, recorded: RecordedRequest): string[] {
  const statements = routeStatements(recorded)
  const after = recorded.statements.length - statements.length
  const sqlMs = statements.reduce((sum, s) => sum + (s.ms ?? 0), 0)
  const summary = statements.map((s) => s.name ?? s.text.trim().split(/\s+/).slice(0, 3).join(' ')).join(', ')
  return [
    `  recorded "${kind}" (${recorded.method} ${recorded.url.split('?')[0]}): ${statements.length} statements ` +
      `${after ? `(and ${after} after the response, not replayed) ` : ''}` +
      `answered in ${recorded.responseMs.toFixed(1)} ms, ${sqlMs.toFixed(1)} ms of it in SQL, alone: ${summary}`,
  ]
}

/** Whether the SQL side failed: a replay that errs did not do the route's work (a collision, a bad value). */
export const sqlFailed = (compared: RouteAgainstSql) => (compared.sql?.errors ?? 0) > 0
