import { execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { freePort, registerStop } from './children.js'
import { seedVersion, seedVolume } from './seed-volume.js'

/**
 * The two PostgreSQL clusters of `npm run bench:replicas`: a private primary seeded as the volume bench seeds
 * (bench/seed-volume.ts) and one streaming standby of it (`pg_basebackup -R -C -S`, as
 * test/helpers/private-services.ts takes one), both in a fixed folder per scale under /var/tmp that a later
 * run starts again instead of seeding anew (about ten minutes at `--scale 1`). The folder's marker
 * (replicas-bench.json) is written once both clusters are complete; a folder without it is removed and made
 * again. The machine's shared PostgreSQL is never touched. PostgreSQL refuses to run as root: as root, its
 * commands run as `postgres`, which owns the folder.
 *
 * `npx tsx bench/replicas-clusters.ts --scale 1 [--reseed]` prepares them (seeds when needed) and stops them.
 */

/** The folder of a scale's clusters: /var/tmp/replicas-bench/scale-0_01 for 0.01. */
export const clustersFolder = (scale: number) =>
  join('/var/tmp/replicas-bench', `scale-${String(scale).replace(/[^0-9a-z]/gi, '_')}`)

/** The seeded database, in the primary (and so in the standby). */
export const DATABASE = 'volumebench'
const SLOT = 'replicas_bench'
const MARKER = 'replicas-bench.json'

const asRoot = process.getuid?.() === 0
const postgresUid = () => Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }))
const BIN = () => execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim()
/** Clock ticks per second of /proc's CPU times. */
export const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100

/** As test/helpers/private-services.ts runs them: as `postgres` when this runs as root. */
function runPostgresTool(tool: string, args: string[]): string {
  const bin = join(BIN(), tool)
  const [command, commandArgs] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
  return execFileSync(command, commandArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

/** A file the clusters' owner can write (the standby's settings). */
function writeOwned(file: string, text: string): void {
  writeFileSync(file, text)
  if (asRoot) chownSync(file, postgresUid(), 0)
}

function ownedFolder(dir: string): void {
  mkdirSync(dir, { recursive: true })
  if (asRoot) chownSync(dir, postgresUid(), 0)
}

export interface SeedMarkerOfClusters {
  scale: number
  version: string
  rows: Record<string, number>
  /** Seconds the seed took, and the standby's base backup. */
  seedSeconds: number
  backupSeconds: number
  date: string
}

export interface BenchCluster {
  label: 'primary' | 'standby'
  data: string
  port: number
  /** The seeded database's URL. */
  url: string
  /** The postmaster's pid, from postmaster.pid. */
  pid(): number
  /**
   * CPU ticks (user + system) of the whole cluster: the postmaster, its live children, and the children it has
   * reaped (the postmaster's cutime and cstime), so that a backend that ended is still counted.
   */
  ticks(): number
  stop(): Promise<void>
}

/**
 * Settings of both clusters. Nothing here must survive a crash: fsync off; 512 MB of shared buffers as a small
 * production server has; WAL kept long enough that the seed's bulk load does not checkpoint every few seconds.
 */
const SETTINGS = [
  'listen_addresses=127.0.0.1',
  'fsync=off',
  'shared_buffers=512MB',
  'max_connections=200',
  'max_wal_size=8GB',
  'checkpoint_timeout=30min',
  'maintenance_work_mem=512MB',
  // The standby's reads are not cancelled by the primary's vacuum (a conflict would send them to the primary).
  'hot_standby_feedback=on',
]

function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return [text.slice(0, text.indexOf(' ')), ...text.slice(text.lastIndexOf(')') + 2).split(' ')]
  } catch {
    return undefined
  }
}

/** The cluster's CPU ticks: see BenchCluster.ticks. */
export function clusterTicks(postmaster: number): number {
  // After the pid: state 1, ppid 2, ..., utime 12, stime 13, cutime 14, cstime 15.
  const own = stat(postmaster)
  if (!own) return 0
  let ticks = Number(own[12]) + Number(own[13]) + Number(own[14]) + Number(own[15])
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    const fields = stat(Number(entry))
    if (fields && Number(fields[2]) === postmaster) ticks += Number(fields[12]) + Number(fields[13])
  }
  return ticks
}

function readPid(data: string): number {
  return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n', 1)[0])
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Starts the cluster of `dir`/`label` on a free port; a copy of it left running by a killed run is stopped first. */
async function startCluster(dir: string, label: BenchCluster['label']): Promise<BenchCluster> {
  const data = join(dir, label)
  const pgCtl = (...args: string[]) => runPostgresTool('pg_ctl', ['-D', data, ...args])
  if (existsSync(join(data, 'postmaster.pid')) && alive(readPid(data))) pgCtl('-m', 'fast', '-w', 'stop')
  const port = await freePort()
  const options = [`-p ${port} -k ${dir}`, ...SETTINGS.map((setting) => `-c ${setting}`)].join(' ')
  pgCtl('-o', options, '-l', join(dir, `${label}.log`), '-w', '-t', '300', 'start')
  const stop = registerStop(async () => {
    try {
      pgCtl('-m', 'fast', '-w', 'stop')
    } catch {
      // Already stopped.
    }
  })
  const pid = readPid(data)
  return {
    label,
    data,
    port,
    url: `postgres://postgres@127.0.0.1:${port}/${DATABASE}`,
    pid: () => pid,
    ticks: () => clusterTicks(pid),
    stop,
  }
}

/** Points the standby at the primary's port of this run (`pg_basebackup -R` wrote the port of the first). */
function followPrimary(dir: string, primary: BenchCluster): void {
  const file = join(dir, 'standby', 'postgresql.auto.conf')
  const kept = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line && !/^(primary_conninfo|primary_slot_name)\s*=/.test(line))
  const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres application_name=standby`
  writeOwned(
    file,
    [...kept, `primary_conninfo = '${conninfo}'`, `primary_slot_name = '${SLOT}'`, ''].join('\n'),
  )
}

async function query<Row extends pg.QueryResultRow>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return (await client.query<Row>(text)).rows
  } finally {
    await client.end()
  }
}

/** Until the standby has replayed what the primary had written when asked (at most `timeoutMs`). */
export async function caughtUp(primary: BenchCluster, standby: BenchCluster, timeoutMs = 300_000) {
  const [target] = await query<{ lsn: string }>(primary.url, 'select pg_current_wal_lsn()::text as lsn')
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const [row] = await query<{ done: boolean }>(
      standby.url,
      `select pg_last_wal_replay_lsn() >= '${target?.lsn}'::pg_lsn as done`,
    )
    if (row?.done) return
    if (Date.now() > deadline) throw new Error(`the standby did not replay up to ${target?.lsn} in time`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

export interface Clusters {
  dir: string
  primary: BenchCluster
  standby: BenchCluster
  marker: SeedMarkerOfClusters
  seededNow: boolean
}

function readMarker(dir: string): SeedMarkerOfClusters | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MARKER), 'utf8')) as SeedMarkerOfClusters
  } catch {
    return undefined
  }
}

/**
 * The primary and its standby of `scale`, started: those of an earlier run when its marker names this scale and
 * this seed's version (and `reseed` is not asked), else made anew: initdb, the volume seed, a base backup.
 */
export async function benchClusters(options: {
  scale: number
  reseed: boolean
  log: (line: string) => void
}): Promise<Clusters> {
  const { scale, log } = options
  const dir = clustersFolder(scale)
  const kept = readMarker(dir)
  if (kept && kept.scale === scale && kept.version === seedVersion() && !options.reseed) {
    log(`${dir}: seeded at --scale ${scale} on ${kept.date} (${kept.seedSeconds} s), reused`)
    const primary = await startCluster(dir, 'primary')
    followPrimary(dir, primary)
    const standby = await startCluster(dir, 'standby')
    await caughtUp(primary, standby)
    return { dir, primary, standby, marker: kept, seededNow: false }
  }
  log(
    `${dir}: ${kept ? 'out of date or --reseed: made again' : 'none: making it'} (initdb, seed, base backup)`,
  )
  for (const label of ['primary', 'standby'] as const) {
    const data = join(dir, label)
    if (existsSync(join(data, 'postmaster.pid')) && alive(readPid(data))) {
      runPostgresTool('pg_ctl', ['-D', data, '-m', 'immediate', '-w', 'stop'])
    }
  }
  rmSync(dir, { recursive: true, force: true })
  ownedFolder(dir)
  runPostgresTool('initdb', [
    ...['-D', join(dir, 'primary'), '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'],
  ])
  const primary = await startCluster(dir, 'primary')
  await query(primary.url.replace(`/${DATABASE}`, '/postgres'), `create database ${DATABASE}`)
  // The version as the seed starts, which migrates first: a migration changed while it runs (another session
  // working in the same tree) is then not taken as applied, and the next run seeds again.
  const version = seedVersion()
  const seedStartedAt = performance.now()
  const seeded = await seedVolume(primary.url, { scale, reset: true, log: (line) => log(`seed: ${line}`) })
  const seedSeconds = Math.round((performance.now() - seedStartedAt) / 100) / 10
  log(`seeded in ${seedSeconds} s; taking the standby's base backup`)
  const backupStartedAt = performance.now()
  runPostgresTool('pg_basebackup', [
    ...['-D', join(dir, 'standby'), '-R', '-X', 'stream', '-c', 'fast', '--no-sync', '-C', '-S', SLOT],
    ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
  ])
  const backupSeconds = Math.round((performance.now() - backupStartedAt) / 100) / 10
  log(`base backup in ${backupSeconds} s`)
  followPrimary(dir, primary)
  const standby = await startCluster(dir, 'standby')
  await caughtUp(primary, standby)
  const marker: SeedMarkerOfClusters = {
    scale,
    version,
    rows: seeded.rows,
    seedSeconds,
    backupSeconds,
    date: new Date().toISOString(),
  }
  writeOwned(join(dir, MARKER), `${JSON.stringify(marker, null, 2)}\n`)
  return { dir, primary, standby, marker, seededNow: true }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scale: { type: 'string', default: '1' }, reseed: { type: 'boolean', default: false } },
  })
  const clusters = await benchClusters({
    scale: Number(values.scale),
    reseed: values.reseed,
    log: (line) => console.error(`bench:replicas: ${line}`),
  })
  await clusters.standby.stop()
  await clusters.primary.stop()
  console.log(`${clusters.dir}: ready (${JSON.stringify(clusters.marker)})`)
}

if (import.meta.url === `file://${process.argv[1]}`) await main()
