import { execFileSync } from 'node:child_process'
import { parseArgs } from 'node:util'
import { benchCommand, stopEverything } from './children.js'
import { alternate, captureResponse, type Measurement, WARMUP_SECONDS } from './load.js'
import { loadLine, machineLine, type Pinning, pinBench, processTicks, sampleMachine } from './machine.js'
import { readOptions, UsageError } from './options.js'
import { type Comparison, formatReport, judge } from './report.js'
import {
  type BenchRequest,
  type ComparedScenario,
  isMeasured,
  type MeasuredScenario,
  type MeasureOptions,
  type Scenario,
} from './scenario.js'
import { scenarios } from './scenarios.js'
import {
  REPO_ROOT,
  type RunningServer,
  SERVER_NODE,
  startBaseline,
  startInstances,
  startOtlpSink,
  tracingEnv,
} from './servers.js'
import { newSqlRecording, type SqlRecording } from './sql-recording.js'
import { prepareStart, readStartCommand, type StartCommand } from './start-command.js'

/**
 * `npm run bench -- <scenario> [--duration SECONDS] [--connections N] [--requests N] [--postgres] [--tracing]`:
 * drives the real server, a bare Fastify route and a bare node:http server answering the same bytes, in
 * turns, with autocannon in this process, and compares them; with `--tracing`, also the server with tracing
 * on at 10 % and 100 % sampling. A measured scenario drives the server alone and reports its own figures.
 */

const MAX_DURATION_SECONDS = 300
const MAX_CONNECTIONS = 1_000
const MAX_REQUESTS = 100_000
// A measured scenario sends a fixed amount of work; this bounds how long it may take, past start-up.
const MEASURED_SECONDS = 600
// Start-up, preparation, stopping and autocannon's request timeouts, beyond the two timed runs.
const OVERHEAD_SECONDS = 150

interface Options extends MeasureOptions {
  name: string
  scenario: Scenario
  postgres: boolean
  /** `--pin`: the load generator and the servers on separate CPUs (bench/README.md, "Run to run"). */
  pin: boolean
  /** `--tracing`: the server also with tracing on, at each of TRACED_SAMPLING's ratios. */
  tracing: boolean
}

/**
 * What tracing may cost the light GET: each sampling ratio, and the least share of the server's req/s
 * without tracing that it keeps (docs/decisions.md, "Tracing that costs little").
 */
const TRACED_SAMPLING = [
  { ratio: 0.1, keeps: 0.85 },
  { ratio: 1, keeps: 0.6 },
]

/** How this run starts the server and where its processes run. */
interface Setup {
  start: StartCommand
  pinning: Pinning | undefined
}

/** Each scenario's own flags (`ScenarioFlags`), by scenario name. */
const scenarioFlags = Object.entries(scenarios).flatMap(([name, scenario]) =>
  isMeasured(scenario) && scenario.flags ? [{ name, flags: scenario.flags }] : [],
)

function usage(): string {
  const names = Object.keys(scenarios).join(', ')
  return (
    'usage: npm run bench -- <scenario> [--duration SECONDS] [--connections N] [--requests N] [--postgres] [--pin] [--tracing]\n' +
    scenarioFlags.map(({ name, flags }) => `       npm run bench -- ${name} ${flags.usage}\n`).join('') +
    `scenarios: ${names}`
  )
}

/** The values of the flags only `scenario` reads; a flag of another scenario is refused. */
function flagsOf(name: string, scenario: Scenario, values: Record<string, unknown>) {
  const own = isMeasured(scenario) ? scenario.flags : undefined
  const flags: Record<string, string | undefined> = {}
  for (const { flags: other } of scenarioFlags) {
    for (const flag of other.names) {
      if (values[flag] === undefined) continue
      if (!own?.names.includes(flag)) throw new UsageError(`--${flag} is not an option of scenario "${name}"`)
      flags[flag] = String(values[flag])
    }
  }
  own?.check(flags)
  return flags
}

function positiveInteger<T>(raw: string | undefined, fallback: T, max: number, flag: string): number | T {
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw new UsageError(`${flag} must be an integer between 1 and ${max}`)
  }
  return value
}

function parseOptions(args: string[]): Options {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      duration: { type: 'string' },
      connections: { type: 'string' },
      requests: { type: 'string' },
      postgres: { type: 'boolean', default: false },
      pin: { type: 'boolean', default: false },
      tracing: { type: 'boolean', default: false },
      ...Object.fromEntries(
        scenarioFlags.flatMap(({ flags }) => flags.names.map((flag) => [flag, { type: 'string' as const }])),
      ),
    },
  })
  const name = positionals[0]
  if (positionals.length !== 1 || !name) throw new UsageError('name one scenario')
  const scenario = scenarios[name]
  if (!scenario) throw new UsageError(`unknown scenario "${name}"`)
  if (scenario.requiresPostgres && !values.postgres) {
    throw new UsageError(`scenario "${name}" reads the server's database: run it with --postgres`)
  }
  if (values.tracing && isMeasured(scenario)) {
    throw new UsageError(`--tracing compares a request's rate: scenario "${name}" measures its own figures`)
  }
  return {
    name,
    scenario,
    durationSeconds: positiveInteger(values.duration, 10, MAX_DURATION_SECONDS, '--duration'),
    connections: positiveInteger(values.connections, 50, MAX_CONNECTIONS, '--connections'),
    requests: positiveInteger(values.requests, undefined, MAX_REQUESTS, '--requests'),
    postgres: values.postgres,
    pin: values.pin,
    tracing: values.tracing,
    flags: flagsOf(name, scenario, values),
  }
}

/** Bounds the whole run: whatever hangs, the children are stopped and the bench exits. */
function armWatchdog(options: Options): void {
  const sides = 3 + (options.tracing ? TRACED_SAMPLING.length : 0)
  const seconds = isMeasured(options.scenario)
    ? MEASURED_SECONDS + OVERHEAD_SECONDS
    : sides * (WARMUP_SECONDS + options.durationSeconds) + OVERHEAD_SECONDS
  setTimeout(() => {
    console.error(`bench: still running after ${seconds} s, giving up`)
    void stopEverything().finally(() => process.exit(1))
  }, seconds * 1000).unref()
}

const log = (line: string) => console.error(`bench: ${line}`)

/** /proc counts CPU time in ticks of 1/100 s (USER_HZ). */
const MICROS_PER_TICK = 10_000

async function bench(options: Options): Promise<boolean> {
  const { scenario } = options
  const start = await readStartCommand(REPO_ROOT)
  const built = await prepareStart(REPO_ROOT, start)
  if (built) log(`${built}: done`)
  const setup = { start, pinning: options.pin ? pinBench() : undefined }
  if (options.pin && !setup.pinning) log('--pin: taskset or a second core is missing, nothing pinned')
  const before = sampleMachine()
  const passed = isMeasured(scenario)
    ? await measure(options, setup, scenario)
    : await compareWithBaseline(options, setup, scenario)
  const after = sampleMachine()
  console.log(
    [
      `server: package.json scripts.start "${start.text}"${built ? `, after ${built}` : ''}, ` +
        `with ${SERVER_NODE} (${execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim()}), ` +
        "from the run's data directory",
      machineLine(setup.pinning),
      `whole run: ${loadLine(before, after)}`,
    ].join('\n'),
  )
  return passed
}

/** The server (`count` instances of it, sharing one database) as the scenario needs it, `env` added. */
async function startOn(
  options: Options,
  setup: Setup,
  scenario: Scenario,
  recording?: SqlRecording,
  count = 1,
  env?: Record<string, string>,
) {
  const instances = count > 1 ? `${count} instances of the server` : 'the server'
  log(`starting ${instances} on ${options.postgres ? 'PostgreSQL' : 'PGlite'}`)
  const scenarioEnv =
    typeof scenario.serverEnv === 'function' ? await scenario.serverEnv() : scenario.serverEnv
  return startInstances(
    {
      start: setup.start,
      postgres: options.postgres,
      env: { ...scenarioEnv, ...env },
      cpus: setup.pinning?.servers,
      ...(recording && { preload: { url: recording.preload, env: recording.env } }),
    },
    count,
  )
}

async function measure(options: Options, setup: Setup, scenario: MeasuredScenario): Promise<boolean> {
  // PGlite runs inside the server's process: its SQL cannot be driven from outside, so no replay there.
  const recording = scenario.replaysSql && options.postgres ? await newSqlRecording() : undefined
  const servers = await startOn(options, setup, scenario, recording, scenario.instances)
  const server = servers[0] as RunningServer
  const target = {
    ...server,
    ...(recording && { sql: recording.recorder(server.pid) }),
    ...(servers.length > 1 && { instances: servers }),
  }
  const measured = await scenario.measure(target, options)
  await Promise.all(servers.map((instance) => instance.stop()))
  const verdict = measured.passed ? 'PASS' : 'BELOW'
  console.log([`scenario ${options.name}: ${scenario.description}`, ...measured.lines, verdict].join('\n'))
  if (measured.failed) console.log('errors, or work lost or doubled: the figures are not valid')
  return !measured.failed
}

/** A server of the comparison, the request prepared on it, and its name in the report. */
interface Compared {
  name: string
  server: RunningServer
  request: BenchRequest
}

async function startTraced(options: Options, setup: Setup, scenario: ComparedScenario): Promise<Compared[]> {
  if (!options.tracing) return []
  log('starting the OTLP sink')
  const sink = await startOtlpSink()
  const traced: Compared[] = []
  for (const { ratio } of TRACED_SAMPLING) {
    const [server] = (await startOn(
      options,
      setup,
      scenario,
      undefined,
      1,
      tracingEnv(sink.baseUrl, ratio),
    )) as [RunningServer]
    traced.push({ name: tracedName(ratio), server, request: await scenario.prepare(server) })
  }
  return traced
}

const tracedName = (ratio: number) => `server, tracing ${ratio * 100} %`

async function compareWithBaseline(
  options: Options,
  setup: Setup,
  scenario: ComparedScenario,
): Promise<boolean> {
  const [server] = (await startOn(options, setup, scenario)) as [RunningServer]
  const request = await scenario.prepare(server)
  const response = await captureResponse(server.baseUrl, request)
  const traced = await startTraced(options, setup, scenario)
  log('starting the baselines')
  const fastify = await startBaseline({ ...response, framework: 'fastify' }, setup.pinning?.servers)
  const node = await startBaseline(response, setup.pinning?.servers)
  const sides = [
    { name: 'server', baseUrl: server.baseUrl, request, pid: server.pid },
    ...traced.map((each) => ({ ...each, baseUrl: each.server.baseUrl, pid: each.server.pid })),
    { name: 'Fastify', baseUrl: fastify.baseUrl, request, pid: fastify.pid },
    { name: 'node:http', baseUrl: node.baseUrl, request, pid: node.pid },
  ]
  log(`driving ${sides.length} in turns: ${request.method} ${request.path}`)
  const pids = sides.map((side) => side.pid)
  const before = sampleMachine(pids)
  const ticksBefore = pids.map((pid) => (pid ? processTicks(pid) : 0))
  const measured = await alternate(sides, options)
  const ticksAfter = pids.map((pid) => (pid ? processTicks(pid) : 0))
  const after = sampleMachine(pids)
  for (const stoppable of [server, ...traced.map((each) => each.server), fastify, node])
    await stoppable.stop()

  const comparisons: Comparison[] = [
    { of: 'server', to: 'node:http', target: scenario.target },
    { of: 'server', to: 'Fastify', target: scenario.frameworkTarget },
    { of: 'Fastify', to: 'node:http' },
    ...traced.map(({ name }, i) => ({
      of: name,
      to: 'server',
      target: TRACED_SAMPLING[i]?.keeps,
    })),
  ]
  // What each side's process spent per request: other work on the machine moves it less than req/s (though a
  // process starved of CPU answers fewer requests per wake-up, and spends more on each).
  const cpuMicrosPerRequest = (i: number) =>
    (((ticksAfter[i] ?? 0) - (ticksBefore[i] ?? 0)) * MICROS_PER_TICK) /
    ((measured[i] as Measurement).requestsPerSecond * options.durationSeconds)
  const outcome = judge(
    sides.map((side, i) => ({
      name: side.name,
      measurement: measured[i] as Measurement,
      cpuMicrosPerRequest: cpuMicrosPerRequest(i),
    })),
    comparisons,
  )
  console.log(formatReport({ name: options.name, scenario, options, response, outcome }))
  console.log(`timed rounds: ${loadLine(before, after)}`)
  return !outcome.failed
}

async function main(): Promise<number> {
  const options = readOptions(parseOptions, usage)
  if (!options) return 2
  armWatchdog(options)
  return benchCommand('bench', () => bench(options))
}

process.exitCode = await main()
