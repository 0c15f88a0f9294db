/**
 * `npm run bench:replicas -- [--scale 1] [--duration 6] [--connections 10] [--only NAMES] [--reseed]`: the
 * volume bench's read routes (bench/volume-routes.ts, READS) on a primary alone against the same primary with
 * one streaming replica. A private primary seeded as the volume bench seeds and one standby of it
 * (bench/replicas-clusters.ts, kept between runs); two servers started as `npm start` does, both on that
 * primary: side "primary" (DATABASE_URL only) and side "primary + replica" (DATABASE_REPLICA_URLS names the
 * standby). Each route is driven for both accounts (the largest and a small one; the operator's across every
 * account) on both sides in turn, in rounds (bench/load.ts, `alternate`); between rounds the CPU time of each
 * cluster's processes is sampled, so that each round's CPU belongs to one side. Prints per route and side the
 * throughput, p50/p99, the primary's and the replica's CPU time per 1,000 reads and the share of reads the
 * replica served, with two verdicts (bench/README.md, "Reads on a replica"), and writes JSON under bench/results/.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { benchCommand } from './children.js'
import { alternate, type Measurement, type Side } from './load.js'
import { cores, cpuShares, loadLine, machineLine, sampleMachine } from './machine.js'
import { positive, readOptions } from './options.js'
import { benchClusters, CLOCK_TICKS, type Clusters } from './replicas-clusters.js'
import { formatTable } from './report.js'
import type { LoadOptions } from './scenario.js'
import { REPO_ROOT, type RunningServer, SERVER_NODE } from './servers.js'
import { prepareStart, readStartCommand, type StartCommand } from './start-command.js'
import {
  type AccountLabel,
  accountRows,
  isOperatorRoute,
  onlyRoutes,
  type Providers,
  READS,
  type Scale,
  sendOnce,
  startProviders,
  startVolumeServer,
  type VolumeRoute,
} from './volume-routes.js'

interface Options {
  scale: number
  load: LoadOptions
  only: string[] | undefined
  reseed: boolean
}

/**
 * The verdicts. CPU: the primary's CPU time per 1,000 reads with the replica at most (1 − the replica's share
 * of the reads + 0.10) times that without: the replica takes its share of the reads off the primary, less a
 * margin of a tenth of the cost without (the replica checks every 250 ms, the second server's idle work, run
 * to run). p99: with the replica at most 1.1 times that without, or 1 ms more (a few-millisecond p99 moves by
 * that from round to round).
 */
export const RULE = { cpuMargin: 0.1, p99Ratio: 1.1, p99SlackMs: 1 } as const

type Verdict = 'PASS' | 'FAIL' | 'INVALID'
type SideName = 'primary' | 'primary + replica'

const log = (line: string) => console.error(`bench:replicas: ${line}`)

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      scale: { type: 'string', default: '1' },
      duration: { type: 'string', default: '6' },
      connections: { type: 'string', default: '10' },
      only: { type: 'string' },
      reseed: { type: 'boolean', default: false },
    },
  })
  const only = onlyRoutes(values.only, READS)
  return {
    scale: positive(values.scale, '--scale', false),
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
    'usage: npm run bench:replicas -- [--scale 1] [--duration 6] [--connections 10] [--only NAME,NAME] [--reseed]\n' +
    `read routes: ${READS.map((route) => route.name).join(', ')}`
  )
}

/** One of the two servers on the primary, as the volume routes need it (a `Scale`), and its /metrics token. */
interface RunningSide extends Scale {
  name: SideName
  server: RunningServer
  metricsToken: string
}

const IDLE_SECONDS = 10
const METRICS_TOKEN = `replicas-bench-${Date.now()}-metrics`

async function startSide(
  name: SideName,
  clusters: Clusters,
  options: Options,
  start: StartCommand,
  providers: Providers,
): Promise<RunningSide> {
  log(`starting the server "${name}"`)
  const { server, target, db, accounts } = await startVolumeServer(start, providers, clusters.primary.url, {
    METRICS_TOKEN,
    ...(name === 'primary + replica' && { DATABASE_REPLICA_URLS: clusters.standby.url }),
  })
  return { name, server, metricsToken: METRICS_TOKEN, target, db, providers, accounts, load: options.load }
}

/** Until `/status/ready` lists the replica in rotation (the server checks it every 250 ms). */
async function replicaInRotation(
  side: RunningSide,
): Promise<{ name: string; state: string; lag_ms?: number }> {
  const deadline = Date.now() + 60_000
  for (;;) {
    const response = await fetch(new URL('/status/ready', side.server.baseUrl))
    const body = (await response.json()) as { replicas?: { name: string; state: string; lag_ms?: number }[] }
    const replica = body.replicas?.[0]
    if (replica?.state === 'in rotation') return replica
    if (Date.now() > deadline) throw new Error(`the replica is not in rotation: ${JSON.stringify(body)}`)
    await delay(250)
  }
}

interface Counters {
  requests: number
  replicaReads: number
}

/** The server's counters: GET requests answered (not /metrics, not /status), and reads sent to its replica. */
async function counters(side: RunningSide): Promise<Counters> {
  const response = await fetch(new URL('/metrics', side.server.baseUrl), {
    headers: { authorization: `Bearer ${side.metricsToken}` },
  })
  const text = await response.text()
  if (!response.ok) throw new Error(`/metrics answered ${response.status}: ${text.slice(0, 200)}`)
  let requests = 0
  let replicaReads = 0
  for (const line of text.split('\n')) {
    const value = Number(line.slice(line.lastIndexOf(' ') + 1))
    if (line.startsWith('http_request_duration_seconds_count{')) {
      if (line.includes('method="GET"') && !/route="\/(metrics|status)/.test(line)) requests += value
    } else if (line.startsWith('database_replica_read_requests_total{')) {
      replicaReads += value
    }
  }
  return { requests, replicaReads }
}

/** The server's counters once they stand still for 100 ms: every request it was sent has been answered. */
async function settled(side: RunningSide): Promise<Counters> {
  let last = await counters(side)
  const deadline = Date.now() + 30_000
  for (;;) {
    await delay(100)
    const now = await counters(side)
    if ((now.requests === last.requests && now.replicaReads === last.replicaReads) || Date.now() > deadline) {
      return now
    }
    last = now
  }
}

const clusterCpu = (clusters: Clusters) => ({
  primary: clusters.primary.ticks(),
  standby: clusters.standby.ticks(),
})

/**
 * CPU ms per second each cluster uses with both servers running and no request: the servers' own work (the
 * job queue's polling, the replica checks every 250 ms) and the clusters' (WAL sender and receiver, checkpoints).
 */
async function idleCpu(clusters: Clusters, seconds: number) {
  const before = clusterCpu(clusters)
  await delay(seconds * 1000)
  const after = clusterCpu(clusters)
  return {
    seconds,
    primaryMsPerSecond: ms(after.primary - before.primary) / seconds,
    standbyMsPerSecond: ms(after.standby - before.standby) / seconds,
  }
}

/** What one side used over its measured rounds (its warm-up left out). */
interface SideTally {
  /** CPU ticks of each cluster's processes. */
  primaryTicks: number
  standbyTicks: number
  /** GET requests its server answered, and of them those it sent to the replica. */
  reads: number
  replicaReads: number
  /** Wall time between its samples: its rounds, and the wait for their last answers. */
  seconds: number
}

export interface SideResult {
  side: SideName
  measurement: Measurement
  /** GET requests answered in its rounds. */
  reads: number
  /**
   * The replica's read requests over `reads`, at most 1: a request still in flight when autocannon ends a round
   * was sent to the replica but never answered, and is counted by the first and not the second.
   */
  replicaShare: number
  seconds: number
  primaryCpuMs: number
  standbyCpuMs: number
  /** CPU ms per 1,000 reads, all of the cluster's processes. */
  primaryPer1k: number
  standbyPer1k: number
  /** The same, less what the cluster uses idle (`idleCpu`) over the side's seconds: the reads' own CPU. */
  primaryNetPer1k: number
  standbyNetPer1k: number
}

export interface RouteResult {
  route: string
  account: AccountLabel | 'operator'
  alone?: SideResult
  replica?: SideResult
  cpuVerdict: Verdict
  p99Verdict: Verdict
  /** The bound the CPU verdict checks: (1 − share + margin) × alone. */
  cpuBoundPer1k?: number
  note?: string
  otherCpu?: number
}

const ms = (ticks: number) => (ticks * 1000) / CLOCK_TICKS

type Idle = Awaited<ReturnType<typeof idleCpu>>

function sideResult(side: SideName, measurement: Measurement, tally: SideTally, idle: Idle): SideResult {
  const reads = Math.max(1, tally.reads)
  const primaryCpuMs = ms(tally.primaryTicks)
  const standbyCpuMs = ms(tally.standbyTicks)
  return {
    side,
    measurement,
    reads: tally.reads,
    replicaShare: Math.min(1, tally.replicaReads / reads),
    seconds: tally.seconds,
    primaryCpuMs,
    standbyCpuMs,
    primaryPer1k: (primaryCpuMs * 1000) / reads,
    standbyPer1k: (standbyCpuMs * 1000) / reads,
    primaryNetPer1k: ((primaryCpuMs - idle.primaryMsPerSecond * tally.seconds) * 1000) / reads,
    standbyNetPer1k: ((standbyCpuMs - idle.standbyMsPerSecond * tally.seconds) * 1000) / reads,
  }
}

function judge(route: string, account: RouteResult['account'], alone: SideResult, replica: SideResult) {
  const unclean = [alone, replica].some((s) => s.measurement.errors > 0 || s.measurement.non2xx > 0)
  const cpuBoundPer1k = (1 - replica.replicaShare + RULE.cpuMargin) * alone.primaryNetPer1k
  const p99Bound = Math.max(
    RULE.p99Ratio * alone.measurement.p99Ms,
    alone.measurement.p99Ms + RULE.p99SlackMs,
  )
  const result: RouteResult = {
    route,
    account,
    alone,
    replica,
    cpuBoundPer1k,
    cpuVerdict: unclean ? 'INVALID' : replica.primaryNetPer1k <= cpuBoundPer1k ? 'PASS' : 'FAIL',
    p99Verdict: unclean ? 'INVALID' : replica.measurement.p99Ms <= p99Bound ? 'PASS' : 'FAIL',
  }
  if (unclean) {
    result.note = [alone, replica]
      .map((s) => `${s.side}: non-2xx ${s.measurement.non2xx}, errors ${s.measurement.errors}`)
      .join('; ')
  }
  return result
}

async function measureRoute(
  route: VolumeRoute,
  sides: RunningSide[],
  clusters: Clusters,
  load: LoadOptions,
  idle: Idle,
) {
  const labels: (AccountLabel | 'operator')[] = isOperatorRoute(route) ? ['operator'] : ['largest', 'small']
  const driven: { account: AccountLabel | 'operator'; side: RunningSide; drive: Side }[] = []
  try {
    for (const account of labels) {
      for (const side of sides) {
        const found = side.accounts.find((a) => a.label === account)
        const request = isOperatorRoute(route)
          ? await route.prepare(side)
          : await route.prepare(side, found as (typeof side.accounts)[number])
        const answer = await sendOnce(side.server.baseUrl, request)
        if (answer.status < 200 || answer.status > 299) {
          throw new Error(
            `the ${account} account on "${side.name}" answered ${answer.status}: ${answer.body.slice(0, 200)}`,
          )
        }
        driven.push({ account, side, drive: { baseUrl: side.server.baseUrl, request } })
      }
    }
  } catch (error) {
    const note = error instanceof Error ? error.message : String(error)
    log(`${route.name}: not measured: ${note}`)
    return labels.map(
      (account): RouteResult => ({
        route: route.name,
        account,
        cpuVerdict: 'INVALID',
        p99Verdict: 'INVALID',
        note,
      }),
    )
  }

  // Sampled after every round (and warm-up) of every side: the CPU and the counters since the last sample
  // belong to the side that just ran. autocannon stops with requests still in flight: their server's
  // counters are read until they stand still (those requests answered), and only then the CPU.
  const tallies: SideTally[] = driven.map(() => ({
    primaryTicks: 0,
    standbyTicks: 0,
    reads: 0,
    replicaReads: 0,
    seconds: 0,
  }))
  const lastCounters = await Promise.all(sides.map(counters))
  let lastCpu = clusterCpu(clusters)
  let lastAt = performance.now()
  const warmed = new Set<number>()
  const sampleAfter = (i: number) => async () => {
    const entry = driven[i] as (typeof driven)[number]
    const s = sides.indexOf(entry.side)
    const counted = await settled(entry.side)
    const now = clusterCpu(clusters)
    const at = performance.now()
    if (warmed.has(i)) {
      const tally = tallies[i] as SideTally
      const last = lastCounters[s] as Counters
      tally.primaryTicks += now.primary - lastCpu.primary
      tally.standbyTicks += now.standby - lastCpu.standby
      tally.reads += counted.requests - last.requests
      tally.replicaReads += counted.replicaReads - last.replicaReads
      tally.seconds += (at - lastAt) / 1000
    } else {
      warmed.add(i)
    }
    lastCounters[s] = counted
    lastCpu = now
    lastAt = at
  }
  const pids = sides.map((side) => side.server.pid)
  const before = sampleMachine(pids)
  const measured = await alternate(
    driven.map((entry, i) => ({ ...entry.drive, settle: sampleAfter(i) })),
    load,
  )
  const shares = cpuShares(before, sampleMachine(pids))
  const results = labels.map((account, a) => {
    const [alone, replica] = [2 * a, 2 * a + 1].map((i) =>
      sideResult(driven[i]?.side.name as SideName, measured[i] as Measurement, tallies[i] as SideTally, idle),
    ) as [SideResult, SideResult]
    return { ...judge(route.name, account, alone, replica), otherCpu: shares?.other }
  })
  const line = (r: RouteResult) =>
    `${r.account} primary CPU/1k ${r.alone?.primaryPer1k.toFixed(0)} → ${r.replica?.primaryPer1k.toFixed(0)} ms ` +
    `(less idle ${r.alone?.primaryNetPer1k.toFixed(0)} → ${r.replica?.primaryNetPer1k.toFixed(0)}) ` +
    `(replica share ${percent(r.replica?.replicaShare)}) ${r.cpuVerdict}, p99 ${r.alone?.measurement.p99Ms} → ` +
    `${r.replica?.measurement.p99Ms} ms ${r.p99Verdict}`
  log(`${route.name}: ${results.map(line).join('; ')}`)
  return results
}

const percent = (share: number | undefined) => (share === undefined ? '' : `${(100 * share).toFixed(0)} %`)
const fixed = (value: number | undefined, digits = 0) => (value === undefined ? '' : value.toFixed(digits))

/** The table: a row per route and account, the two sides side by side, and the verdicts. */
function formatResults(results: RouteResult[], idle: Idle): string {
  const headings = [
    'route',
    'account',
    'req/s alone',
    'req/s +replica',
    'p50 alone',
    'p50 +replica',
    'p99 alone',
    'p99 +replica',
    'p99',
    'primary CPU/1k alone',
    'primary CPU/1k +replica',
    'less idle: alone',
    '+replica',
    'replica CPU/1k',
    'replica share',
    'CPU',
    'other CPU',
  ]
  const rows = results.map((r) => [
    r.route,
    r.account,
    fixed(r.alone?.measurement.requestsPerSecond),
    fixed(r.replica?.measurement.requestsPerSecond),
    fixed(r.alone?.measurement.p50Ms, 1),
    fixed(r.replica?.measurement.p50Ms, 1),
    fixed(r.alone?.measurement.p99Ms, 1),
    fixed(r.replica?.measurement.p99Ms, 1),
    r.p99Verdict,
    fixed(r.alone?.primaryPer1k),
    fixed(r.replica?.primaryPer1k),
    fixed(r.alone?.primaryNetPer1k),
    fixed(r.replica?.primaryNetPer1k),
    fixed(r.replica?.standbyPer1k),
    percent(r.replica?.replicaShare),
    r.cpuVerdict,
    percent(r.otherCpu),
  ])
  const measured = results.filter((r) => r.alone && r.replica)
  const sum = (pick: (r: RouteResult) => number) => measured.reduce((total, r) => total + pick(r), 0)
  const total = (which: 'alone' | 'replica') => {
    const reads = sum((r) => r[which]?.reads ?? 0)
    const seconds = sum((r) => r[which]?.seconds ?? 0)
    const primary = sum((r) => r[which]?.primaryCpuMs ?? 0)
    const standby = sum((r) => r[which]?.standbyCpuMs ?? 0)
    const per1k = (cpuMs: number) => (reads > 0 ? ((cpuMs * 1000) / reads).toFixed(0) : '')
    const share = reads > 0 ? sum((r) => (r[which]?.replicaShare ?? 0) * (r[which]?.reads ?? 0)) / reads : 0
    return (
      `${reads.toLocaleString('en')} reads in ${seconds.toFixed(0)} s (${percent(share)} on the replica): CPU ms per ` +
      `1,000 reads: primary ${per1k(primary)} (less idle ${per1k(primary - idle.primaryMsPerSecond * seconds)}), ` +
      `replica ${per1k(standby)} (less idle ${per1k(standby - idle.standbyMsPerSecond * seconds)}), both ${per1k(primary + standby)}`
    )
  }
  const geomean = (ratio: (r: RouteResult) => number) =>
    measured.length > 0 ? Math.exp(sum((r) => Math.log(ratio(r))) / measured.length) : Number.NaN
  const ratioOf = (pick: (m: Measurement) => number) => (r: RouteResult) =>
    pick((r.replica as SideResult).measurement) / pick((r.alone as SideResult).measurement)
  const p99Geomean = geomean(ratioOf((m) => m.p99Ms))
  const notes = results.filter((r) => r.note).map((r) => `${r.route} (${r.account}): ${r.note}`)
  const count = (verdict: (r: RouteResult) => Verdict) => results.filter((r) => verdict(r) === 'PASS').length
  return [
    formatTable([headings, ...rows], 2),
    '',
    `all routes, alone: ${total('alone')}`,
    `all routes, +replica: ${total('replica')}`,
    `geometric means over the ${measured.length} rows of +replica / alone: req/s ${fixed(geomean(ratioOf((m) => m.requestsPerSecond)), 2)}, ` +
      `p50 ${fixed(geomean(ratioOf((m) => m.p50Ms)), 2)}, p99 ${fixed(p99Geomean, 2)} ` +
      `(${p99Geomean <= RULE.p99Ratio ? 'PASS' : 'FAIL'}: at most ${RULE.p99Ratio})`,
    `CPU PASS: the primary's CPU per 1,000 reads less idle, with the replica <= (1 - replica share + ${RULE.cpuMargin}) x ` +
      `alone (${count((r) => r.cpuVerdict)} of ${results.length} rows); p99 PASS: p99 with the replica <= ` +
      `max(${RULE.p99Ratio} x alone, alone + ${RULE.p99SlackMs} ms) (${count((r) => r.p99Verdict)} of ${results.length}). ` +
      'CPU/1k: CPU ms (user + system) of every process of the cluster per 1,000 GETs answered; less idle: less ' +
      "what the cluster uses with no request over the same seconds (below); 'other CPU': the machine's CPU time " +
      'that went to work outside the bench, its servers and PostgreSQL.',
    ...notes,
  ].join('\n')
}

function writeResults(json: object): string {
  const dir = join(REPO_ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `replicas-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`)
  return file
}

async function bench(options: Options): Promise<boolean> {
  const startedAt = new Date()
  const loadAtStart = sampleMachine()
  const start = await readStartCommand(REPO_ROOT)
  const built = await prepareStart(REPO_ROOT, start)
  if (built) log(`${built}: done`)
  const clusters = await benchClusters({ scale: options.scale, reseed: options.reseed, log })
  const providers = await startProviders()
  const sides = [
    await startSide('primary', clusters, options, start, providers),
    await startSide('primary + replica', clusters, options, start, providers),
  ]
  const replica = await replicaInRotation(sides[1] as RunningSide)
  log(`replica ${replica.name}: ${replica.state}, lag ${replica.lag_ms} ms`)
  const idle = await idleCpu(clusters, IDLE_SECONDS)
  const idleLine =
    `idle (both servers up, no request, ${IDLE_SECONDS} s): primary ${idle.primaryMsPerSecond.toFixed(0)} ms of CPU ` +
    `a second, replica ${idle.standbyMsPerSecond.toFixed(0)} ms`
  log(idleLine)
  const accounts = await Promise.all(
    (sides[0] as RunningSide).accounts.map(async (a) => ({
      label: a.label,
      name: a.name,
      rows: await accountRows((sides[0] as RunningSide).db, a.accountId),
    })),
  )
  const routes = READS.filter((route) => !options.only || options.only.includes(route.name))
  const before = sampleMachine()
  const results: RouteResult[] = []
  for (const route of routes)
    results.push(...(await measureRoute(route, sides, clusters, options.load, idle)))
  const after = sampleMachine()
  for (const side of sides) await side.server.stop()

  const { connections, durationSeconds } = options.load
  const rows = Object.values(clusters.marker.rows).reduce((sum, n) => sum + n, 0)
  const machine = [
    `server: package.json scripts.start "${start.text}", with ${SERVER_NODE} ` +
      `(${execFileSync(SERVER_NODE, ['--version'], { encoding: 'utf8' }).trim()}), two at once on one primary`,
    machineLine(undefined),
    `clusters: ${clusters.dir} (PostgreSQL ${postgresVersion()}), primary and standby on the same ${cores} cores`,
    `routes measured: ${loadLine(before, after)}`,
    `whole run (clusters, seed if any, servers, routes): ${loadLine(loadAtStart, sampleMachine())}`,
  ]
  const seeded = clusters.seededNow
    ? `seeded by this run in ${clusters.marker.seedSeconds} s, base backup ${clusters.marker.backupSeconds} s`
    : `seeded on ${clusters.marker.date} in ${clusters.marker.seedSeconds} s (reused)`
  const file = writeResults({
    date: startedAt.toISOString(),
    options,
    rule: RULE,
    machine,
    clusters: { dir: clusters.dir, marker: clusters.marker, seededNow: clusters.seededNow },
    idle,
    accounts,
    routes: results,
  })
  console.log(
    [
      `bench:replicas: ${routes.length} read routes at --scale ${options.scale} (${rows.toLocaleString('en')} rows, ` +
        `${seeded}), ${connections} connections, ${durationSeconds} s per side in rounds alternating ` +
        `"primary" (alone) and "primary + replica" for each account, after 3 s of warm-up each`,
      `accounts: ${accounts.map((a) => `${a.label} ${a.name}`).join(', ')}`,
      '',
      formatResults(results, idle),
      idleLine,
      '',
      ...machine,
      `results: ${file}`,
    ].join('\n'),
  )
  return !results.some((r) => r.cpuVerdict === 'INVALID')
}

const postgresVersion = () =>
  execFileSync('pg_config', ['--version'], { encoding: 'utf8' })
    .trim()
    .replace(/^PostgreSQL /, '')

async function main(): Promise<number> {
  const options = readOptions(parseOptions, usage)
  if (!options) return 2
  return benchCommand('bench:replicas', () => bench(options))
}

process.exitCode = await main()
