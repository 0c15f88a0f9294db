import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import {
  MIGRATIONS_FOLDER,
  type MigrationSettings,
  migrate,
  pendingMigrations,
  readMigrations,
  type SqlSession,
} from '../src/platform/db/migrations.js'
import { type Answer, type MixRequest, startMix } from './migrate-load.js'
import {
  type LockSampling,
  MIGRATION_APPLICATION,
  type StatementTime,
  startLockSampler,
  timedSession,
} from './migrate-locks.js'

/**
 * One measurement of `npm run bench:migrate`: the mix sent to a running server at a steady rate, and after a
 * warm-up and a stretch of ordinary traffic, a folder of migrations applied by the project's runner on a
 * connection of its own (as `npm run db:migrate` applies them, with the same settings), while its locks are
 * sampled; then more ordinary traffic, so that the requests queued behind the migration are counted too.
 */

/** The bundled examples of the two kinds measured: an index on contacts, a column on chat. */
export const BUNDLED_MIGRATIONS = ['contacts-name-prefix-index', 'room-messages-pinned-at'].map((name) =>
  fileURLToPath(new URL(`./migrations/${name}`, import.meta.url)),
)

export interface MeasureOptions {
  /** Requests a second, all of the mix's together. */
  rate: number
  /** Not counted: the server's caches and PostgreSQL's buffers after a file copy. */
  warmupSeconds: number
  /** Ordinary traffic before the migration, the p99 it is compared with. */
  beforeSeconds: number
  afterSeconds: number
  /** How often pg_locks is sampled. */
  sampleMs: number
  /** The runner's lock_timeout and tries (MIGRATION_LOCK_TIMEOUT_MS, MIGRATION_LOCK_ATTEMPTS). */
  settings: MigrationSettings
  /**
   * A transaction that has read `table` and stays open for `seconds` from a second before the migration (a
   * report, an export, a backup's dump): the migration's strong lock cannot be had until it ends, and each
   * try queues the requests behind it for up to lock_timeout.
   */
  longRead?: { table: string; seconds: number }
}

export interface AppliedMigration {
  tag: string
  startedMs: number
  ms: number
}

export interface MigrationMeasurement {
  folder: string
  /** Each migration of the folder applied, in order, with its time. */
  migrations: AppliedMigration[]
  /** Why a migration was not applied (the runner gave up). */
  error?: string
  /** Every statement the runner sent, its own bookkeeping included. */
  statements: StatementTime[]
  locks: LockSampling
  answers: Answer[]
  /** In the mix's clock: when the counted traffic began, and the migration started and ended. */
  window: { countedFromMs: number; startMs: number; endMs: number }
}

/**
 * The folder's migrations one tag at a time (`to`), so that each one's time is its own; a migration that fails
 * (its lock never had within its tries) ends the run's migrations, and the traffic goes on being measured.
 */
async function applyEach(
  session: SqlSession,
  folder: string,
  tags: string[],
  settings: MigrationSettings,
  now: () => number,
): Promise<{ migrations: AppliedMigration[]; error?: string }> {
  const migrations: AppliedMigration[] = []
  for (const tag of tags) {
    const startedMs = now()
    try {
      await migrate(session, { folders: [MIGRATIONS_FOLDER, folder], to: tag, ...settings })
    } catch (error) {
      return { migrations, error: `${tag}: ${(error as Error).message}` }
    }
    migrations.push({ tag, startedMs, ms: now() - startedMs })
  }
  return { migrations }
}

const LONG_READ_LEAD_MS = 1_000

/** `longRead`'s transaction, opened now, ended after its seconds; resolves when it has read the table. */
async function startLongRead(databaseUrl: string, { table, seconds }: { table: string; seconds: number }) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench:migrate-long-read' })
  client.on('error', () => undefined)
  await client.connect()
  await client.query('begin')
  await client.query(`select 1 from "${table.replace(/"/g, '""')}" limit 1`)
  const ended = delay(seconds * 1000).then(async () => {
    await client.query('commit')
    await client.end()
  })
  return { ended }
}

/** A session of the runner, named so that the lock sampler finds it. */
async function migrationClient(databaseUrl: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: MIGRATION_APPLICATION })
  client.on('error', () => undefined)
  await client.connect()
  return client
}

/**
 * The folder's tags, which must be all that the database lacks: the migration before the first of them is the
 * database's newest (bench/migrate.ts brings it there first).
 */
export async function checkPending(session: SqlSession, folder: string): Promise<string[]> {
  const tags = readMigrations([folder]).map(({ tag }) => tag)
  const pending = await pendingMigrations(session, { folders: [MIGRATIONS_FOLDER, folder] })
  if (pending.join() !== tags.join()) {
    throw new Error(
      `the database lacks ${pending.join(', ') || 'nothing'}; the migrations of ${folder} are ${tags.join(', ')}: ` +
        'each must come after the newest migration applied',
    )
  }
  return tags
}

/** `longRead` started a second before the migration is due. */
async function startLongReadBefore(databaseUrl: string, options: MeasureOptions) {
  if (!options.longRead) return undefined
  await delay(Math.max(0, options.beforeSeconds * 1000 - LONG_READ_LEAD_MS))
  return startLongRead(databaseUrl, options.longRead)
}

export async function measureMigration(
  baseUrl: string,
  databaseUrl: string,
  mix: MixRequest[],
  folder: string,
  options: MeasureOptions,
): Promise<MigrationMeasurement> {
  const client = await migrationClient(databaseUrl)
  try {
    const tags = await checkPending((text, values) => client.query(text, values), folder)
    const running = startMix(baseUrl, mix, options.rate)
    await delay(options.warmupSeconds * 1000)
    const countedFromMs = running.now()
    const longRead = await startLongReadBefore(databaseUrl, options)
    await delay(Math.max(0, options.beforeSeconds * 1000 - (running.now() - countedFromMs)))
    const statements: StatementTime[] = []
    const session = timedSession(client, statements, running.now)
    const sampler = await startLockSampler(databaseUrl, running.now, options.sampleMs)
    const startMs = running.now()
    const { migrations, error } = await applyEach(session, folder, tags, options.settings, running.now)
    const endMs = running.now()
    const locks = await sampler.stop()
    await longRead?.ended
    await delay(options.afterSeconds * 1000)
    const answers = await running.stop()
    return {
      folder,
      migrations,
      statements,
      locks,
      answers,
      window: { countedFromMs, startMs, endMs },
      ...(error && { error }),
    }
  } finally {
    await client.end()
  }
}
