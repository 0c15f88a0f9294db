import { parseArgs } from 'node:util'
import { stopEverything } from './children.js'
import { captureResponse, compare, type LoadOptions, WARMUP_SECONDS } from './load.js'
import { formatReport, judge } from './report.js'
import { type ComparedScenario, isMeasured, type MeasuredScenario, type Scenario } from './scenario.js'
import { scenarios } from './scenarios.js'
import { startBaseline, startServer } from './servers.js'

/**
 * `npm run bench -- <scenario> [--duration SECONDS] [--connections N] [--requests N] [--postgres]`:
 * drives the real server and a bare node:http baseline answering the same bytes, with autocannon in this
 * process, and compares them; a measured scenario drives the server alone and reports its own figures.
 */

const MAX_DURATION_SECONDS = 300
const MAX_CONNECTIONS = 1_000
const MAX_REQUESTS = 100_000
// A measured scenario sends a fixed amount of work; this bounds how long it may take, past start-up.
const MEASURED_SECONDS = 600
// Start-up, preparation, stopping and autocannon's request timeouts, beyond the two timed runs.
const OVERHEAD_SECONDS = 150

interface Options extends LoadOptions {
  name: string
  scenario: Scenario
  requests: number | undefined
  postgres: boolean
}

class UsageError extends Error {}

function usage(): string {
  const names = Object.keys(scenarios).join(', ')
  return (
    'usage: npm run bench -- <scenario> [--duration SECONDS] [--connections N] [--requests N] [--postgres]\n' +
    `scenarios: ${names}`
  )
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
    },
  })
  const name = positionals[0]
  if (positionals.length !== 1 || !name) throw new UsageError('name one scenario')
  const scenario = scenarios[name]
  if (!scenario) throw new UsageError(`unknown scenario "${name}"`)
  if (scenario.requiresPostgres && !values.postgres) {
    throw new UsageError(`scenario "${name}" reads the server's database: run it with --postgres`)
  }
  return {
    name,
    scenario,
    durationSeconds: positiveInteger(values.duration, 10, MAX_DURATION_SECONDS, '--duration'),
    connections: positiveInteger(values.connections, 50, MAX_CONNECTIONS, '--connections'),
    requests: positiveInteger(values.requests, undefined, MAX_REQUESTS, '--requests'),
    postgres: values.postgres,
  }
}

/** Bounds the whole run: whatever hangs, the children are stopped and the bench exits. */
function armWatchdog(options: Options): void {
  const seconds = isMeasured(options.scenario)
    ? MEASURED_SECONDS + OVERHEAD_SECONDS
    : 2 * (WARMUP_SECONDS + options.durationSeconds) + OVERHEAD_SECONDS
  setTimeout(() => {
    console.error(`bench: still running after ${seconds} s, giving up`)
    void stopEverything().finally(() => process.exit(1))
  }, seconds * 1000).unref()
}

/** Ctrl-C, or a CI job's timeout: the children must not outlive the bench. */
function stopOnSignals(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      console.error(`bench: ${signal}, stopping the servers`)
      void stopEverything().finally(() => process.exit(code))
    })
  }
}

const log = (line: string) => console.error(`bench: ${line}`)

async function bench(options: Options): Promise<boolean> {
  const { scenario } = options
  return isMeasured(scenario) ? measure(options, scenario) : compareWithBaseline(options, scenario)
}

async function measure(options: Options, scenario: MeasuredScenario): Promise<boolean> {
  log(`starting the server on ${options.postgres ? 'PostgreSQL' : 'PGlite'}`)
  const server = await startServer({ postgres: options.postgres, env: scenario.serverEnv })
  const measured = await scenario.measure(server, options)
  await server.stop()
  const verdict = measured.passed ? 'PASS' : 'BELOW'
  console.log([`scenario ${options.name}: ${scenario.description}`, ...measured.lines, verdict].join('\n'))
  if (measured.failed) console.log('errors, or work lost or doubled: the figures are not valid')
  return !measured.failed
}

async function compareWithBaseline(options: Options, scenario: ComparedScenario): Promise<boolean> {
  log(`starting the server on ${options.postgres ? 'PostgreSQL' : 'PGlite'}`)
  const server = await startServer({ postgres: options.postgres, env: scenario.serverEnv })
  const request = await scenario.prepare(server)
  const response = await captureResponse(server.baseUrl, request)
  log('starting the baseline')
  const baseline = await startBaseline(response)
  log(`driving both: ${request.method} ${request.path}`)
  const measured = await compare(server.baseUrl, baseline.baseUrl, request, options)
  await server.stop()
  await baseline.stop()

  const outcome = judge(scenario, measured.server, measured.baseline)
  console.log(formatReport({ name: options.name, scenario, options, response, outcome }))
  return !outcome.failed
}

async function main(): Promise<number> {
  let options: Options
  try {
    options = parseOptions(process.argv.slice(2))
  } catch (error) {
    if (!(error instanceof UsageError) && !(error instanceof TypeError)) throw error
    console.error(`${error.message}\n${usage()}`)
    return 2
  }
  armWatchdog(options)
  stopOnSignals()
  try {
    return (await bench(options)) ? 0 : 1
  } catch (error) {
    console.error(`bench failed: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  } finally {
    await stopEverything()
  }
}

process.exitCode = await main()
