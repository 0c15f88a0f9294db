/**
 * `npm run bench:volume -- [--small 0.01] [--large 1] [--duration 10] [--connections 10] [--only NAMES]
 * [--reseed]`: each route a client uses every day, and the hot writes, measured on a database seeded at a small
 * scale and on one seeded at a large scale, for the largest account and a small one. Both
 * servers run at once, started as `npm start` does, each on a copy of its scale's seeded database; each route
 * is driven with autocannon on the four (scale, account) sides in turn, in rounds, so that a change of load on
 * the machine falls on every side. Prints one table with the ratios of the large scale to the small one and a
 * verdict per row, the rows each scale held, and writes the results as JSON under bench/results/.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import { benchCommand } from './children.js'
import { alternate, type Side } from './load.js'
import { cpuShares, loadLine, machineLine, sampleMachine } from './machine.js'
import { positive, readOptions, UsageError } from './options.js'
import type { LoadOptions } from './scenario.js'
import { REPO_ROOT, type RunningServer, SERVER_NODE } from './servers.js'
import { prepareStart, readStartCommand, type StartCommand } from './start-command.js'
import { runCopy, seededDatabase } from './volume-databases.js'
import { formatResults, formatRows, judgeRoute, type RouteResult, type ScaleReport } from './volume-report.js'
import {
  type AccountLabel,
  accountRows,
  isOperatorRoute,
  jobsDone,
  onlyRoutes,
  type Providers,
  ROUTES,
  type Scale,
  sendOnce,
  startProviders,
  startVolumeServer,
  type VolumeRoute,
} from './volume-routes.js'

interface Options {
  small: number
  large: number
  load: LoadOptions
  only: string[] | undefined
  reseed: boolean
}

const log = (line: string) => console.error(`bench:volume: ${line}`)

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      small: { type: 'string', default: '0.01' },
      large: { type: 'string', default: '1' },
      duration: { type: 'string', default: '10' },
      connections: { type: 'string', default: '10' },
      only: { type: 'string' },
      reseed: { type: 'boolean', default: false },
    },
  })
  const small = positive(values.small, '--small', false)
  const large = positive(values.large, '--large', false)
  if (small >= large) throw new UsageError('--small must be below --large')
  const only = onlyRoutes(values.only, ROUTES)
  return {
    small,
    large,
    load: {
      durationSeconds: positive(values.duration, '--duration', true),
      connections: positive(values.connections, '--connections', true),
    },
    only,
    reseed: values.reseed,
  }
}

function usage(): string {
  return (
    'usage: npm run bench:volume -- [--small 0.01] [--large 1] [--duration 10] [--connections 10] ' +
    '[--only NAME,NAME] [--reseed]\n' +
    `routes: ${ROUTES.map((route) => route.name).join(', ')}`
  )
}

/** One scale: its seeded database (reused when it holds that seed), a copy for this run, the server on it. */
interface RunningScale extends Scale {
  label: 'small' | 'large'
  scale: number
  server: RunningServer
  report: ScaleReport
}

async function startScale(
  label: 'small' | 'large',
  scale: number,
  options: Options,
  start: StartCommand,
  providers: Providers,
): Promise<RunningScale> {
  const seeded = await seededDatabase(scale, { reseed: options.reseed, log })
  const copy = await runCopy(seeded)
  log(`starting the server on a copy of ${seeded.name}`)
  const { server, target, db, accounts } = await startVolumeServer(start, providers, copy.url)
  const report: ScaleReport = {
    label,
    scale,
    database: seeded.name,
    rows: seeded.marker.rows,
    seedSeconds: seeded.marker.seconds,
    accounts: await Promise.all(
      accounts.map(async (a) => ({ label: a.label, name: a.name, rows: await accountRows(db, a.accountId) })),
    ),
  }
  return { label, scale, server, target, db, providers, accounts, load: options.load, report }
}

/** Untimed, after a write's round: until the jobs it queued are done, so that they load its own round only. */
const settle = (scale: RunningScale, route: string) => async () => {
  if (!(await jobsDone(scale.db))) log(`${route}: jobs still due after a minute at --scale ${scale.scale}`)
}

/** The route's request on each (account, scale) side, sent once first: it must answer 2xx. */
async function sidesOf(route: VolumeRoute, scales: RunningScale[]) {
  const labels: (AccountLabel | 'operator')[] = isOperatorRoute(route) ? ['operator'] : ['largest', 'small']
  const sides: (Side & { account: AccountLabel | 'operator' })[] = []
  for (const account of labels) {
    for (const scale of scales) {
      const found = scale.accounts.find((a) => a.label === account)
      const request = isOperatorRoute(route)
        ? await route.prepare(scale)
        : await route.prepare(scale, found as (typeof scale.accounts)[number])
      const answer = await sendOnce(scale.server.baseUrl, request)
      if (answer.status < 200 || answer.status > 299) {
        throw new Error(
          `the ${account} account at --scale ${scale.scale} answered ${answer.status}: ${answer.body.slice(0, 200)}`,
        )
      }
      const writes = !isOperatorRoute(route) && route.writes
      sides.push({
        account,
        baseUrl: scale.server.baseUrl,
        request,
        ...(writes && { settle: settle(scale, route.name) }),
      })
    }
  }
  return { labels, sides }
}

async function measureRoute(route: VolumeRoute, scales: RunningScale[], load: LoadOptions) {
  let prepared: Awaited<ReturnType<typeof sidesOf>>
  try {
    prepared = await sidesOf(route, scales)
  } catch (error) {
    const note = error instanceof Error ? error.message : String(error)
    log(`${route.name}: not measured: ${note}`)
    const labels = isOperatorRoute(route) ? ['operator' as const] : (['largest', 'small'] as const)
    return labels.map((account): RouteResult => ({ route: route.name, account, verdict: 'INVALID', note }))
  }
  const pids = scales.map((scale) => scale.server.pid)
  const before = sampleMachine(pids)
  const measured = await alternate(prepared.sides, load)
  const cpu = cpuShares(before, sampleMachine(pids))
  // Sides go account by account, the small scale first.
  const results = prepared.labels.map((account, i) => {
    const [small, large] = [measured[2 * i], measured[2 * i + 1]]
    if (!small || !large) throw new Error(`${route.name}: a side was not measured`)
    return judgeRoute(route.name, account, small, large, cpu)
  })
  const ratios = (r: RouteResult) =>
    `${r.account} req/s ${r.throughputRatio?.toFixed(2)}, p99 ${r.p99Ratio?.toFixed(2)} ${r.verdict}`
  log(`${route.name}: ${results.map(ratios).join('; ')}`)
  return results
}

function writeResults(results: RouteResult[], reports: ScaleReport[], options: Options, lines: string[]) {
  const dir = join(REPO_ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `volume-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  const json = { date: new Date().toISOString(), options, machine: lines, scales: reports, routes: results }
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`)
  return file
}

async function bench(options: Options): Promise<boolean> {
  const start = await readStartCommand(REPO_ROOT)
  const built = await prepareStart(REPO_ROOT, start)
  if (built) log(`${built}: done`)
  const providers = await startProviders()
  const scales = [
    await startScale('small', options.small, options, start, providers),
    await startScale('large', options.large, options, start, providers),
  ]
  for (const scale of scales) await settle(scale, 'start-up')()
  const routes = ROUTES.filter((route) => !options.only || options.only.includes(route.name))
  const before = sampleMachine()
  const results: RouteResult[] = []
  for (const route of routes) {
    results.push(...(await measureRoute(route, scales, options.load)))
  }
  const after = sampleMachine()
  for (const scale of scales) await scale.server.stop()

  const reports = scales.map((scale) => scale.report) as [ScaleReport, ScaleReport]
  const { connections, durationSeconds } = options.load
  const machine = [
    `server: package.json scripts.start "${start.text}", with ${SERVER_NODE} ` +
      `(${execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim()}), two at once (one per scale)`,
    machineLine(undefined),
    `whole run: ${loadLine(before, after)}`,
  ]
  const file = writeResults(results, reports, options, machine)
  console.log(
    [
      `bench:volume: ${routes.length} routes at --scale ${options.small} and --scale ${options.large}, ` +
        `${connections} connections, ${durationSeconds} s per side in rounds alternating the four sides ` +
        '(two scales, two accounts), after 3 s of warm-up each; the writes wait for their jobs after each round',
      `accounts: largest ${reports.map((r) => r.accounts[0]?.name).join(' / ')}, small ${reports.map((r) => r.accounts[1]?.name).join(' / ')}`,
      '',
      formatResults(results, reports),
      '',
      formatRows(reports),
      '',
      ...machine,
      `results: ${file}`,
    ].join('\n'),
  )
  return !results.some((result) => result.verdict === 'INVALID')
}

async function main(): Promise<number> {
  const options = readOptions(parseOptions, usage)
  if (!options) return 2
  return benchCommand('bench:volume', () => bench(options))
}

process.exitCode = await main()
