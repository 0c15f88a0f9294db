import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import type { PGlite } from '@electric-sql/pglite'
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import pg from 'pg'
import type { Logger } from '../log/logger.js'
import { createOutageLog } from '../log/outage-log.js'
import { lockDataDir } from './data-dir-lock.js'
import { dedicatedConnection } from './dedicated-connection.js'
import { type MigrateOptions, migrate, pendingMigrations, type SqlSession } from './migrations.js'
import { openReplicaSet, REPLICA_MAX_LAG_DEFAULT_MS, type ReplicaSet } from './replicas.js'
import { type ConnectionSettings, connectionSettings, type DatabaseWaits } from './waits.js'

/** A Drizzle database or transaction: every repository function takes one as its executor. */
export type Database = PgDatabase<PgQueryResultHKT>

export interface DatabaseHandle {
  kind: 'pglite' | 'postgres'
  db: Database
  /** What pg-boss connects with: its own pool on PostgreSQL, the shared embedded instance on PGlite. */
  jobsConnection: ({ connectionString: string } & Partial<ConnectionSettings>) | { executeSql: RawExecutor }
  ping(): Promise<void>
  /** The API's connections on PostgreSQL (metrics); the embedded database has no pool. */
  poolStats?(): { total: number; idle: number; waiting: number }
  /** The streaming replicas that serve reads (DATABASE_REPLICA_URLS), when there are any. */
  replicas?: ReplicaSet
  /** The embedded database's data directory as one tar file, which `pgliteDump` opens again. */
  dumpDataDir?(): Promise<Blob>
  close(): Promise<void>
}

export type RawExecutor = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>

export interface DatabaseOptions {
  /** PostgreSQL URL; without it the embedded PGlite database is used. */
  databaseUrl?: string
  /** Directory of the embedded database; without it PGlite runs in memory (tests). */
  dataDir?: string
  /**
   * An in-memory embedded database starts as this dumped data directory (PGlite's `dumpDataDir`): the
   * tests open one migrated copy each instead of running initdb and the migrations every time.
   */
  pgliteDump?: Blob
  poolSize?: number
  /** The bounds on waiting for PostgreSQL (the server's; unset, nothing is bounded: seeding and benches). */
  waits?: DatabaseWaits
  /** Streaming replicas of `databaseUrl` that serve reads (PostgreSQL only; see replicas.ts). */
  replicaUrls?: string[]
  /** DATABASE_REPLICA_MAX_LAG_MS: a replica further behind leaves the rotation. */
  replicaMaxLagMs?: number
  /** Where a lost connection is told, once an outage (PostgreSQL only). */
  log?: Logger
}

export async function openDatabase(options: DatabaseOptions): Promise<DatabaseHandle> {
  return options.databaseUrl
    ? openPostgres(options.databaseUrl, options)
    : openPglite(options.dataDir, options.pgliteDump)
}

/** A logger for handles opened without one (tests, benches): outages still never end the process. */
const SILENT: Logger = {
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
}

/**
 * pg-boss's own statements (fetching, maintenance, archiving) may run longer than the API's: its maintenance
 * deletes and moves finished jobs in bulk. Bounded still, so that nothing waits forever.
 */
const JOB_QUEUE_STATEMENT_TIMEOUT_MS = 60_000

async function openPostgres(connectionString: string, options: DatabaseOptions): Promise<DatabaseHandle> {
  const settings = connectionSettings(options.waits)
  const log = options.log ?? SILENT
  const poolSize = options.poolSize ?? 10
  const replicas = options.replicaUrls?.length
    ? openReplicaSet({
        primaryUrl: connectionString,
        urls: options.replicaUrls,
        poolSize,
        settings,
        maxLagMs: options.replicaMaxLagMs ?? REPLICA_MAX_LAG_DEFAULT_MS,
        log,
        survivesLostConnections: (pool, name) => survivesLostConnections(pool, createOutageLog(log, name)),
      })
    : undefined
  const pool =
    replicas?.pool ?? new pg.Pool({ connectionString, max: poolSize, keepAlive: true, ...settings })
  survivesLostConnections(pool, createOutageLog(log, 'PostgreSQL'))
  const db = drizzleNodePg(pool) as unknown as Database
  // Readiness asks PostgreSQL itself, outside the pool: a pool whose connections all wait on a lock held on
  // one table says nothing of the database, and a load balancer that read it so would take every instance
  // out of rotation for one lock.
  const ping = dedicatedConnection(connectionString, settings)
  return {
    kind: 'postgres',
    db,
    jobsConnection: {
      connectionString,
      ...settings,
      // No lock_timeout: pg-boss serialises its maintenance and singletons on advisory locks it waits for.
      lock_timeout: undefined,
      ...(options.waits && { statement_timeout: JOB_QUEUE_STATEMENT_TIMEOUT_MS }),
    },
    ping: async () => void (await ping.query('select 1')),
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    replicas,
    close: async () => {
      await ping.close()
      await (replicas ? replicas.close() : pool.end())
    },
  }
}

/**
 * pg emits 'error' when a connection dies (PostgreSQL stopped, failed over, or killed it): on the pool for
 * an idle connection, on the client for one checked out between two statements. An 'error' event with no
 * listener ends the process, so both are listened to; the pool drops the dead connection and makes new ones
 * as requests need them, and the request that was using it fails with the error (a 503).
 */
function survivesLostConnections(pool: pg.Pool, outage: ReturnType<typeof createOutageLog>): void {
  pool.on('error', outage.failed)
  pool.on('connect', (client) => {
    client.on('error', outage.failed)
    outage.recovered()
  })
}

/**
 * Connects once and runs `select 1`, giving up after `timeoutMs`: a start checks that its database
 * answers before anything else, instead of failing later with a pool's stack. Rejects with pg's error.
 */
export async function probePostgres(connectionString: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString, connectionTimeoutMillis: timeoutMs })
  // The failure is connect()'s rejection; without a listener a late socket error would be thrown.
  client.on('error', () => undefined)
  try {
    await client.connect()
    await client.query('select 1')
  } finally {
    await client.end().catch(() => undefined)
  }
}

/**
 * PostgreSQL settings of the embedded database. PGlite's default shared_buffers (128 MB) sits in the
 * process's WebAssembly memory; 16 MB keeps an idle server's RSS down (docs/decisions.md, the figures).
 */
const PGLITE_SETTINGS = ['shared_buffers=16MB']

/**
 * Creates the embedded database's cluster (initdb) in a worker thread that then exits: initdb grows
 * PGlite's WebAssembly memory to over 600 MB, which a process never gives back, so the server opening it
 * afterwards holds only what a restarted one does.
 */
async function initPgliteCluster(path: string): Promise<void> {
  if (existsSync(join(path, 'PG_VERSION'))) return
  const worker = new Worker(
    `const { workerData } = require('node:worker_threads')
     import(workerData.pglite).then(({ PGlite }) => PGlite.create(workerData.options)).then((db) => db.close())`,
    {
      eval: true,
      workerData: {
        pglite: import.meta.resolve('@electric-sql/pglite'),
        options: { dataDir: path, postgresqlconf: PGLITE_SETTINGS },
      },
    },
  )
  await new Promise<void>((resolve, reject) => {
    worker.once('error', reject)
    worker.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`initdb of ${path} exited with ${code}`)),
    )
  })
}

/**
 * The contrib extensions the migrations create (PostgreSQL ships them; PGlite loads each one it may use):
 * btree_gin lets a GIN index start with the account; pg_trgm served the first contact search index (migration
 * 0023), replaced in 0032 by keys of the account's own, and is still created on the way.
 */
async function pgliteExtensions() {
  const [{ btree_gin }, { pg_trgm }] = await Promise.all([
    import('@electric-sql/pglite/contrib/btree_gin'),
    import('@electric-sql/pglite/contrib/pg_trgm'),
  ])
  return { btree_gin, pg_trgm }
}

/** PGlite is loaded only here, for the embedded database: a server on PostgreSQL never holds its code. */
async function createPglite(path: string | undefined, dump: Blob | undefined): Promise<PGlite> {
  if (path) await initPgliteCluster(path)
  const { PGlite } = await import('@electric-sql/pglite')
  return PGlite.create({
    dataDir: path,
    loadDataDir: dump,
    postgresqlconf: PGLITE_SETTINGS,
    extensions: await pgliteExtensions(),
  })
}

async function openPglite(dataDir: string | undefined, dump: Blob | undefined): Promise<DatabaseHandle> {
  const unlock = dataDir ? lockDataDir(dataDir) : () => undefined
  const path = dataDir ? join(dataDir, 'pglite') : undefined
  const client = await createPglite(path, dump).catch((error: unknown) => {
    unlock()
    throw error
  })
  const { drizzle: drizzlePglite } = await import('drizzle-orm/pglite')
  const db = drizzlePglite(client) as unknown as Database
  return {
    kind: 'pglite',
    db,
    // pg-boss sends multi-statement scripts without parameters (schema set-up, and its maintenance's
    // `BEGIN ... RETURNING ... COMMIT` blocks); PGlite runs those with exec. pg-boss 12 reads the rows of
    // every statement, as node-postgres returns them for such a script (as pg-boss's own fromPglite does).
    jobsConnection: {
      executeSql: async (text, values) => {
        if (values && values.length > 0) return client.query(text, values)
        const results = await client.exec(text)
        return { rows: results.flatMap((result) => result.rows ?? []) }
      },
    },
    ping: async () => {
      await client.query('select 1')
    },
    dumpDataDir: () => client.dumpDataDir('none'),
    close: async () => {
      await client.close()
      unlock()
    },
  }
}

/**
 * Applies the pending migrations (migrations.ts) and returns their tags; safe when several processes start at
 * once. On PostgreSQL on a connection of its own, which its transactions and advisory lock need.
 */
export function migrateDatabase(
  handle: DatabaseHandle,
  options: DatabaseOptions,
  migration: MigrateOptions = {},
): Promise<string[]> {
  return withMigrationSession(handle, options, (session) => migrate(session, migration))
}

/** The tags of the migrations the database lacks: a production server refuses to start on those. */
export function pendingMigrationsOf(
  handle: DatabaseHandle,
  options: DatabaseOptions,
  migration: MigrateOptions = {},
): Promise<string[]> {
  return withMigrationSession(handle, options, (session) => pendingMigrations(session, migration))
}

async function withMigrationSession<T>(
  handle: DatabaseHandle,
  options: DatabaseOptions,
  use: (session: SqlSession) => Promise<T>,
): Promise<T> {
  // The embedded database is one session already.
  if ('executeSql' in handle.jobsConnection) return use(handle.jobsConnection.executeSql)
  const client = new pg.Client({ connectionString: options.databaseUrl })
  // A connection lost mid-migration fails the statement running; unheard, its 'error' would end the process.
  client.on('error', () => undefined)
  await client.connect()
  try {
    return await use((text, values) => client.query(text, values))
  } finally {
    await client.end()
  }
}

/**
 * Distinct raw statements given a name of their own, beyond which the others run unnamed: each name is a
 * prepared statement kept by every connection that runs it, so their number must stay bounded.
 */
const MAX_NAMED_RAW_STATEMENTS = 64
const rawStatementNames = new Map<string, string>()

/** The name a raw statement is prepared under, or undefined once the bound is reached. */
function rawStatementName(text: string): string | undefined {
  let name = rawStatementNames.get(text)
  if (!name && rawStatementNames.size < MAX_NAMED_RAW_STATEMENTS) {
    name = `raw_${createHash('sha256').update(text).digest('hex').slice(0, 24)}`
    rawStatementNames.set(text, name)
  }
  return name
}

/**
 * Runs a raw, $n-parameterised statement on a Drizzle database or transaction (pg-boss's queries), as a
 * named prepared statement: PostgreSQL parses and plans it once per connection instead of on every call,
 * which was more than half of what storing a webhook and queueing its job cost (docs/decisions.md).
 */
export function rawExecutor(executor: Database): RawExecutor {
  return async (text, values = []) => {
    const query = { sql: text, params: values.map((value) => value ?? null) }
    const prepared = executor._.session.prepareQuery(query, undefined, rawStatementName(text), false)
    const result = (await prepared.execute()) as { rows: unknown[] }
    return { rows: result.rows }
  }
}
