/**
 * `npm run bench:migrate -- [--migration FOLDER]... [--seeded NAME] [--scale 1] [--rate 80] [--warmup 10]
 * [--before 10] [--after 10] [--sample 20] [--long-read TABLE:SECONDS]`: a migration applied while the service serves an agency's traffic.
 * For each folder of migrations (drizzle-kit's layout: SQL files and meta/_journal.json;
 * by default the two of bench/migrations/ that show the safe forms), on a copy of a database seeded at
 * `--scale` and brought to the migration before the folder's first: the server started as `npm start` does
 * (production: it does not migrate), the mix of migrate-load.ts sent at `--rate`, the folder applied by the
 * project's runner, and the report: each statement's time, the locks it took on which table for how long, the
 * requests' p99 before and during and the longest wait of any, the 5xx, and PASS when no request waited more
 * than 2 s and none failed. The results go to bench/results/migrate-<time>.json as well.
 */
import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { loadConfig } from '../src/config.js'
import { migrate } from '../src/platform/db/migrations.js'
import { benchCommand, registerStop } from './children.js'
import { loadLine, machineLine, sampleMachine } from './machine.js'
import { checkMix, migrationMix } from './migrate-load.js'
import { formatMeasurement, formatSummary, type Judged, judge } from './migrate-report.js'
import { BUNDLED_MIGRATIONS, type MeasureOptions, measureMigration } from './migrate-run.js'
import { readOptions, UsageError } from './options.js'
import { databaseUrl } from './postgres.js'
import { readSeedMarker } from './seed-volume.js'
import { REPO_ROOT, startServer } from './servers.js'
import { prepareStart, readStartCommand, type StartCommand } from './start-command.js'
import { runCopy, type SeededDatabase, seededDatabase } from './volume-databases.js'
import { type Providers, type Scale, startProviders, volumeAccounts } from './volume-routes.js'

interface Options extends MeasureOptions {
  folders: string[]
  scale: number
  seeded: string | undefined
}

const log = (line: string) => console.error(`bench:migrate: ${line}`)

function positive(raw: string, flag: string): number {
  const value = Number(raw)
  if (!(value > 0)) throw new UsageError(`${flag} must be a number above 0, not ${raw}`)
  return value
}

/** `--long-read room_messages:5`: a table and the seconds a transaction that read it stays open. */
function longReadOf(raw: string): { table: string; seconds: number } {
  const [table, seconds] = raw.split(':')
  if (!table || !/^[a-z_][a-z0-9_]*$/.test(table) || seconds === undefined) {
    throw new UsageError(`--long-read must be TABLE:SECONDS, not ${raw}`)
  }
  return { table, seconds: positive(seconds, '--long-read') }
}

function parseOptions(args: string[]): Options {
  const { values } = parseArgs({
    args,
    options: {
      migration: { type: 'string', multiple: true },
      seeded: { type: 'string' },
      scale: { type: 'string', default: '1' },
      rate: { type: 'string', default: '80' },
      warmup: { type: 'string', default: '10' },
      before: { type: 'string', default: '10' },
      after: { type: 'string', default: '10' },
      sample: { type: 'string', default: '20' },
      'long-read': { type: 'string' },
    },
  })
  if (values.seeded !== undefined && !/^[a-z_][a-z0-9_]*$/.test(values.seeded)) {
    throw new UsageError(`--seeded must name a database (lower case, digits, _), not ${values.seeded}`)
  }
  return {
    folders: values.migration?.map((folder) => resolve(folder)) ?? BUNDLED_MIGRATIONS,
    seeded: values.seeded,
    scale: positive(values.scale, '--scale'),
    rate: positive(values.rate, '--rate'),
    warmupSeconds: positive(values.warmup, '--warmup'),
    beforeSeconds: positive(values.before, '--before'),
    afterSeconds: positive(values.after, '--after'),
    sampleMs: positive(values.sample, '--sample'),
    ...(values['long-read'] && { longRead: longReadOf(values['long-read']) }),
    // As `npm run db:migrate` reads them: MIGRATION_LOCK_TIMEOUT_MS, MIGRATION_LOCK_ATTEMPTS.
    settings: loadConfig({
      MIGRATION_LOCK_TIMEOUT_MS: process.env.MIGRATION_LOCK_TIMEOUT_MS,
      MIGRATION_LOCK_ATTEMPTS: process.env.MIGRATION_LOCK_ATTEMPTS,
    }).migrations,
  }
}

function usage(): string {
  return (
    'usage: npm run bench:migrate -- [--migration FOLDER]... [--seeded DATABASE] [--scale 1] [--rate 80] ' +
    '[--warmup 10] [--before 10] [--after 10] [--sample 20] [--long-read TABLE:SECONDS]'
  )
}

/**
 * The seeded database the copies are made of: `--seeded` (seeded by `npm run seed:volume`, its marker read),
 * else bench:volume's kept database of `--scale`, seeded when it lacks that seed.
 */
async function seededSource(options: Options): Promise<SeededDatabase> {
  if (!options.seeded) return seededDatabase(options.scale, { reseed: false, log })
  const marker = await readSeedMarker(databaseUrl(options.seeded))
  if (!marker) throw new Error(`${options.seeded} holds no complete seed (npm run seed:volume)`)
  log(`${options.seeded}: seeded at --scale ${marker.scale} (${marker.seconds} s)`)
  return { name: options.seeded, marker, seededNow: false }
}

/** The project's migrations the copy lacks, applied before the server starts: the migration before the measured. */
async function bringUp(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const applied = await migrate((text, values) => client.query(text, values))
    if (applied.length > 0) log(`applied drizzle/ ${applied.join(', ')} first`)
  } finally {
    await client.end()
  }
}

/** The server on a copy of the seed, its accounts and the mix; stopped and dropped by `stop`. */
async function startOnCopy(seeded: SeededDatabase, start: StartCommand, providers: Providers) {
  const copy = await runCopy(seeded)
  await bringUp(copy.url)
  const server = await startServer({
    start,
    postgres: false,
    env: { ...providers.env, DATABASE_URL: copy.url },
  })
  const db = new pg.Pool({ connectionString: copy.url, max: 2 })
  // The copy is dropped with FORCE at the end, which ends idle connections: not an error of the run.
  db.on('error', () => undefined)
  const endPool = registerStop(() => db.end())
  const target = { ...server, databaseUrl: copy.url }
  const scale: Scale = {
    target,
    db,
    providers,
    accounts: await volumeAccounts(target, db),
    load: { connections: 1, durationSeconds: 1 },
  }
  const mix = await migrationMix(scale)
  await checkMix(server.baseUrl, mix)
  const stop = async () => {
    await server.stop()
    await endPool()
    await copy.drop()
  }
  return { server, url: copy.url, mix, stop }
}

interface Run {
  judged: Judged
  load: string
}

async function measureFolder(
  folder: string,
  seeded: SeededDatabase,
  start: StartCommand,
  providers: Providers,
  options: Options,
): Promise<Run> {
  const running = await startOnCopy(seeded, start, providers)
  try {
    log(`${folder}: ${running.mix.length} requests in turn at ${options.rate}/s`)
    const before = sampleMachine([running.server.pid])
    const measurement = await measureMigration(
      running.server.baseUrl,
      running.url,
      running.mix,
      folder,
      options,
    )
    const run: Run = { judged: judge(measurement, options.sampleMs), load: loadLine(before, sampleMachine()) }
    console.log(`\n${formatMeasurement(run.judged)}\n${run.load}\n`)
    return run
  } finally {
    await running.stop()
  }
}

function writeResults(runs: Run[], options: Options): string {
  const dir = join(REPO_ROOT, 'bench', 'results')
  mkdirSync(dir, { recursive: true })
  const file = join(dir, `migrate-${new Date().toISOString().replace(/[:.]/g, '-')}.json`)
  const results = runs.map(({ judged: { measurement, ...figures }, load }) => {
    const { answers: _answers, ...kept } = measurement
    return { ...figures, measurement: kept, load }
  })
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), options, results }, null, 2)}\n`)
  return file
}

async function bench(options: Options): Promise<boolean> {
  const start = await readStartCommand(REPO_ROOT)
  const built = await prepareStart(REPO_ROOT, start)
  if (built) log(`${built}: done`)
  const seeded = await seededSource(options)
  const providers = await startProviders()
  const runs: Run[] = []
  for (const folder of options.folders)
    runs.push(await measureFolder(folder, seeded, start, providers, options))
  console.log(
    [
      `bench:migrate: on copies of ${seeded.name} (--scale ${seeded.marker.scale}), ${options.rate} requests/s, ` +
        `${options.beforeSeconds} s before the migration and ${options.afterSeconds} s after counted; ` +
        `lock_timeout ${options.settings.lockTimeoutMs} ms, ${options.settings.lockAttempts} tries` +
        (options.longRead
          ? `; a transaction that read ${options.longRead.table} open for ${options.longRead.seconds} s from 1 s before`
          : ''),
      '',
      formatSummary(runs.map((run) => run.judged)),
      '',
      machineLine(undefined),
      `results: ${writeResults(runs, options)}`,
    ].join('\n'),
  )
  return runs.every((run) => run.judged.verdict === 'PASS')
}

async function main(): Promise<number> {
  const options = readOptions(parseOptions, usage)
  if (!options) return 2
  return benchCommand('bench:migrate', () => bench(options))
}

process.exitCode = await main()
