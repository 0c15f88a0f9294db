import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { registerStop, stopEverything, stopOnSignals } from './children.js'
import { loadAverage } from './machine.js'
import type { BenchRequest } from './scenario.js'
import { REPO_ROOT, startServer } from './servers.js'
import { newSqlRecording, type RecordedStatement } from './sql-recording.js'
import { routeStatements } from './sql-replay.js'
import { readStartCommand } from './start-command.js'
import {
  isOperatorRoute,
  READS,
  type Scale,
  startProviders,
  type VolumeAccount,
  type VolumeRoute,
  volumeAccounts,
} from './volume-routes.js'

/**
 * PostgreSQL's JIT on the service's reads: the SQL the server sends for the volume bench's reads
 * (bench/volume-routes.ts), recorded from a server on a seeded database for its largest and a small account,
 * then each SELECT run again on a connection of this script's own with `jit` on and off: once under
 * EXPLAIN (ANALYZE, BUFFERS), for the planner's cost and JIT's own timing, and timed over several runs.
 *
 *   tsx bench/jit.ts postgres://postgres@127.0.0.1:5432/seed_volume_1 [--runs 7] [--only NAME,NAME] [--jit-above-cost N]
 *
 * The server runs no job workers and the reads write nothing, so the seeded database is left as it was but
 * for pg-boss's schema, which the server creates if it is missing.
 */

interface Explained {
  cost: number
  planningMs: number
  executionMs: number
  /** JIT's own time (generation, inlining, optimization, emission), 0 when the plan was not compiled. */
  jitMs: number
  jitFunctions: number
  /** JIT's time per phase, ms: generation, inlining, optimization, emission. */
  jitPhases: number[]
}

interface Measured extends Explained {
  /** Median over the runs of the statement itself, as the client waits for it (the server's plan each time). */
  medianMs: number
}

const { values: flags, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    runs: { type: 'string', default: '7' },
    only: { type: 'string' },
    'jit-above-cost': { type: 'string' },
  },
})
const RUNS = Number(flags.runs)
const ONLY = flags.only?.split(',')
/**
 * `jit_above_cost` of the runs with jit on (PostgreSQL's default, 100,000, unless given): a lower one shows what
 * JIT costs a statement whose estimate the account's growth would carry past the default.
 */
const JIT_ABOVE_COST = flags['jit-above-cost']
// A SELECT (the reads' statements); anything else the request sent is not run again.
const SELECT = /^\s*(\(\s*)?(select|with)\b/i
const WRITE = /\b(insert\s+into|update\s+\S+\s+(as\s+\S+\s+)?set|delete\s+from|for\s+update)\b/i

const USAGE =
  'usage: tsx bench/jit.ts <seeded database url> [--runs 7] [--only NAME,NAME] [--jit-above-cost N]'

async function main() {
  const databaseUrl = positionals[0]
  if (!databaseUrl) throw new Error(USAGE)
  stopOnSignals()
  try {
    const scale = await recordingServer(databaseUrl)
    printHeader()
    for (const route of READS) {
      if (!ONLY || ONLY.includes(route.name)) await measureRoute(scale, route)
    }
    console.log(`# load average at the end ${loadAverage()}`)
  } finally {
    await stopEverything()
  }
}

/** The server on the seeded database with the SQL recorder, no job workers, and the two accounts. */
async function recordingServer(databaseUrl: string): Promise<Scale> {
  const recording = await newSqlRecording()
  const providers = await startProviders()
  const server = await startServer({
    start: await readStartCommand(REPO_ROOT),
    postgres: false,
    env: { ...providers.env, DATABASE_URL: databaseUrl, RUN_WORKERS: 'false' },
    preload: { url: recording.preload, env: recording.env },
  })
  const db = new pg.Pool({ connectionString: databaseUrl, max: 2 })
  registerStop(() => db.end())
  const target = { ...server, databaseUrl, sql: recording.recorder(server.pid) }
  const accounts = await volumeAccounts(target, db)
  return { target, db, providers, accounts, load: { connections: 1, durationSeconds: 1 } }
}

function printHeader() {
  const settings = JIT_ABOVE_COST ? `, jit_above_cost ${JIT_ABOVE_COST}` : ''
  console.log(`# ${new Date().toISOString()}, load average ${loadAverage()}${settings}`)
  console.log(
    '| route | account | statement on | cost | planning ms on / off | execution ms on / off | JIT ms (generation + inlining + optimization + emission) | median ms, jit on | median ms, jit off |',
  )
  console.log('|---|---|---|---:|---:|---:|---:|---:|---:|')
}

/** Each SELECT the route's request sent, for each account (or once, the operator's), jit on then off. */
async function measureRoute(scale: Scale, route: VolumeRoute) {
  for (const account of isOperatorRoute(route) ? [undefined] : scale.accounts) {
    const request = isOperatorRoute(route)
      ? await route.prepare(scale)
      : await route.prepare(scale, account as VolumeAccount)
    const label = account?.label ?? 'operator'
    for (const statement of await recordedSelects(scale, request, `${route.name}-${label}`)) {
      const on = await measure(scale.target.databaseUrl, statement, 'on')
      const off = await measure(scale.target.databaseUrl, statement, 'off')
      console.log(`| ${row(route.name, label, statement.text, on, off)} |`)
    }
  }
}

/** The SELECTs the server sent for `request` before answering it. */
async function recordedSelects(
  scale: Scale,
  request: BenchRequest,
  label: string,
): Promise<RecordedStatement[]> {
  const recorder = scale.target.sql
  if (!recorder) throw new Error('no SQL recorder')
  const response = await fetch(new URL(request.path, scale.target.baseUrl), {
    method: request.method,
    headers: { ...request.headers, ...recorder.headers(label) },
  })
  if (!response.ok) throw new Error(`${label}: ${response.status} ${await response.text()}`)
  await response.arrayBuffer()
  const recorded = await recorder.read(label)
  return routeStatements(recorded).filter((s) => SELECT.test(s.text) && !WRITE.test(s.text))
}

const valuesOf = (statement: RecordedStatement) =>
  statement.values.map((value) =>
    value !== null && typeof value === 'object' ? Buffer.from(value.base64, 'base64') : value,
  )

/** On a new connection with `jit` set: EXPLAIN ANALYZE once after a warm-up, then `RUNS` timed runs. */
async function measure(
  databaseUrl: string,
  statement: RecordedStatement,
  jit: 'on' | 'off',
): Promise<Measured> {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    await client.query(`set jit = ${jit}`)
    if (JIT_ABOVE_COST) await client.query(`set jit_above_cost = ${Number(JIT_ABOVE_COST)}`)
    const values = valuesOf(statement)
    await client.query(statement.text, values)
    const explained = await explain(client, statement.text, values)
    const times: number[] = []
    for (let i = 0; i < RUNS; i++) {
      const started = performance.now()
      await client.query(statement.text, values)
      times.push(performance.now() - started)
    }
    return { ...explained, medianMs: median(times) }
  } finally {
    await client.end()
  }
}

const JIT_PHASES = ['Generation', 'Inlining', 'Optimization', 'Emission'] as const

async function explain(client: pg.Client, text: string, values: unknown[]): Promise<Explained> {
  const { rows } = await client.query(`explain (analyze, buffers, format json) ${text}`, values)
  const [result] = rows[0]['QUERY PLAN'] as {
    Plan: { 'Total Cost': number }
    'Planning Time': number
    'Execution Time': number
    JIT?: { Functions: number; Timing: Record<(typeof JIT_PHASES)[number] | 'Total', number> }
  }[]
  if (!result) throw new Error('EXPLAIN returned no plan')
  return {
    cost: result.Plan['Total Cost'],
    planningMs: result['Planning Time'],
    executionMs: result['Execution Time'],
    jitMs: result.JIT?.Timing.Total ?? 0,
    jitFunctions: result.JIT?.Functions ?? 0,
    jitPhases: JIT_PHASES.map((phase) => result.JIT?.Timing[phase] ?? 0),
  }
}

const median = (times: number[]) => {
  const sorted = [...times].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? 0
}

const ms = (value: number) => value.toFixed(value < 10 ? 2 : 1)

/** The table of the statement's outermost FROM (else its first), to tell a request's statements apart. */
function tableOf(text: string): string {
  let depth = 0
  for (let i = 0; i < text.length; i++) {
    const char = text[i]
    if (char === '(') depth++
    else if (char === ')') depth--
    else if (depth === 0) {
      const from = /^from\s+"?(\w+)"?/i.exec(text.slice(i))
      if (from && /\W/.test(text[i - 1] ?? ' ')) return from[1] as string
    }
  }
  return /\bfrom\s+"?(\w+)"?/i.exec(text)?.[1] ?? '?'
}

function row(route: string, account: string, text: string, on: Measured, off: Measured): string {
  const jit = on.jitFunctions > 0 ? `${ms(on.jitMs)} (${on.jitPhases.map(ms).join(' + ')})` : '—'
  return [
    route,
    account,
    tableOf(text),
    Math.round(on.cost).toLocaleString('en'),
    `${ms(on.planningMs)} / ${ms(off.planningMs)}`,
    `${ms(on.executionMs)} / ${ms(off.executionMs)}`,
    jit,
    ms(on.medianMs),
    ms(off.medianMs),
  ].join(' | ')
}

main().catch(async (error) => {
  console.error(error)
  await stopEverything()
  process.exit(1)
})
