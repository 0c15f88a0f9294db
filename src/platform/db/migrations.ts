import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

/**
 * The migration runner (docs/decisions.md, "Migrations that never take a table offline"). It applies the SQL
 * drizzle-kit generates, one migration at a time, each in a transaction of its own with a short
 * `lock_timeout`, retried with backoff while a lock is not to be had, so that a migration waits rather than
 * queueing every request behind it. It records what it applied in Drizzle's own table, so a database that
 * Drizzle's migrator brought up to some migration is taken on from there.
 */

/** The project's migrations, as drizzle-kit generates them (journal in meta/_journal.json). */
export const MIGRATIONS_FOLDER = join(fileURLToPath(new URL('.', import.meta.url)), '../../../drizzle')

/**
 * The first line of a migration that must run outside a transaction (`CREATE INDEX CONCURRENTLY`, `DROP
 * INDEX CONCURRENTLY`): its statements run one by one, each retried alone, so each must be safe to run again
 * (`IF NOT EXISTS`, `IF EXISTS`).
 */
export const NO_TRANSACTION_DIRECTIVE = '-- migration: no-transaction'

/** Drizzle's table of applied migrations (drizzle-orm's pg-core dialect): kept, so both runners agree. */
const APPLIED_TABLE = 'drizzle.__drizzle_migrations'

/** One PostgreSQL session (a client, never a pool): the advisory lock and each transaction live on it. */
export type SqlSession = (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>

export interface MigrationLog {
  info(message: string): void
  warn(message: string): void
}

export interface MigrationSettings {
  /** `lock_timeout` of each migration's statements: how long one waits for a lock before trying again. */
  lockTimeoutMs: number
  /** Tries of a migration (or a statement of a no-transaction one) whose lock was not to be had. */
  lockAttempts: number
}

/**
 * Half a second: below the service's own lock_timeout (DATABASE_LOCK_TIMEOUT_MS, 1 s), so that a request
 * queued behind a migration waiting for its lock gets its own when the migration gives up, instead of failing.
 * 20 tries, with the waits between them, span 4 to 7 minutes.
 */
export const MIGRATION_DEFAULTS: MigrationSettings = { lockTimeoutMs: 500, lockAttempts: 20 }

export interface MigrateOptions extends Partial<MigrationSettings> {
  /** Folders of drizzle-kit migrations, merged in the order of their journals' `when`; the project's by default. */
  folders?: string[]
  /** The tag of the last migration to apply; all of them by default. */
  to?: string
  log?: MigrationLog
  /** The first wait after a lock timeout, doubled each time up to `maxRetryDelayMs`, with jitter. */
  retryDelayMs?: number
  maxRetryDelayMs?: number
}

export interface Migration {
  tag: string
  /** The journal's `when`: what Drizzle stores as `created_at`, and what it orders applied migrations by. */
  when: number
  /** sha256 of the file, as Drizzle records it. */
  hash: string
  statements: string[]
  transaction: boolean
}

interface JournalEntry {
  tag: string
  when: number
}

/** The migrations of `folders`, oldest first, up to the one tagged `to`. */
export function readMigrations(folders: string[] = [MIGRATIONS_FOLDER], to?: string): Migration[] {
  const migrations = folders.flatMap(readFolder).sort((a, b) => a.when - b.when)
  if (to === undefined) return migrations
  const last = migrations.findIndex((migration) => migration.tag === to)
  if (last < 0) throw new Error(`no migration is tagged ${to}`)
  return migrations.slice(0, last + 1)
}

function readFolder(folder: string): Migration[] {
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: JournalEntry[]
  }
  return journal.entries.map(({ tag, when }) => {
    const text = readFileSync(join(folder, `${tag}.sql`), 'utf8')
    return {
      tag,
      when,
      hash: createHash('sha256').update(text).digest('hex'),
      statements: text.split('--> statement-breakpoint'),
      transaction: !text.startsWith(NO_TRANSACTION_DIRECTIVE),
    }
  })
}

/**
 * The tags of the migrations not yet applied, as Drizzle's migrator decides: those newer than the newest
 * applied one. A database newer than the code (the next release's migrations applied first) has none.
 */
export async function pendingMigrations(
  session: SqlSession,
  options: MigrateOptions = {},
): Promise<string[]> {
  return (await pending(session, readMigrations(options.folders, options.to))).map(({ tag }) => tag)
}

async function pending(session: SqlSession, migrations: Migration[]): Promise<Migration[]> {
  // A statement naming a table that does not exist fails to parse, whatever branch it would take: two.
  const table = await session(`select to_regclass('${APPLIED_TABLE}') is not null as present`)
  const { present } = table.rows[0] as { present: boolean }
  const { rows } = present
    ? await session(`select max(created_at)::text as newest from ${APPLIED_TABLE}`)
    : { rows: [{ newest: null }] }
  const newest = Number((rows[0] as { newest: string | null }).newest ?? Number.NEGATIVE_INFINITY)
  return migrations.filter((migration) => migration.when > newest)
}

/**
 * Applies the pending migrations in order and returns their tags. The advisory lock makes processes that
 * start at once migrate once: the others wait for it, then find nothing pending.
 */
export async function migrate(session: SqlSession, options: MigrateOptions = {}): Promise<string[]> {
  const migrations = readMigrations(options.folders, options.to)
  await session('select pg_advisory_lock($1)', [MIGRATION_LOCK])
  try {
    await session('create schema if not exists drizzle')
    await session(
      `create table if not exists ${APPLIED_TABLE} (id serial primary key, hash text not null, created_at bigint)`,
    )
    const todo = await pending(session, migrations)
    for (const migration of todo) await applyMigration(session, migration, options)
    return todo.map(({ tag }) => tag)
  } finally {
    await session('select pg_advisory_unlock($1)', [MIGRATION_LOCK])
  }
}

const MIGRATION_LOCK = 72_616_001

async function applyMigration(session: SqlSession, migration: Migration, options: MigrateOptions) {
  const started = Date.now()
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_DEFAULTS.lockTimeoutMs
  if (migration.transaction) {
    await retryingLocks(migration.tag, options, () => applyInTransaction(session, migration, lockTimeoutMs))
  } else {
    await applyOutsideTransaction(session, migration, options, lockTimeoutMs)
  }
  options.log?.info(`migration ${migration.tag} applied in ${Date.now() - started} ms`)
}

async function applyInTransaction(session: SqlSession, migration: Migration, lockTimeoutMs: number) {
  await session('begin')
  try {
    await session(`set local lock_timeout = ${lockTimeoutMs}`)
    for (const statement of migration.statements) await session(statement)
    await record(session, migration)
    await session('commit')
  } catch (error) {
    await session('rollback')
    throw error
  }
}

/** Each statement alone (autocommit), with the session's lock_timeout, then the record of the migration. */
async function applyOutsideTransaction(
  session: SqlSession,
  migration: Migration,
  options: MigrateOptions,
  lockTimeoutMs: number,
) {
  await session(`set lock_timeout = ${lockTimeoutMs}`)
  try {
    for (const statement of migration.statements) {
      await retryingLocks(migration.tag, options, async () => {
        await dropInvalidIndex(session, statement)
        await session(statement)
      })
    }
    await record(session, migration)
  } finally {
    await session('reset lock_timeout')
  }
}

const CONCURRENT_INDEX =
  /create\s+(?:unique\s+)?index\s+concurrently\s+(?:if\s+not\s+exists\s+)?((?:"[^"]+"|\w+)(?:\.(?:"[^"]+"|\w+))?)/i

/**
 * A concurrent index build that failed (a lock timeout, a crash, a duplicate key) leaves its index behind,
 * INVALID: `IF NOT EXISTS` would then keep it, unused by any query and still updated by every write. It is
 * dropped (concurrently) so that the statement builds it again.
 */
async function dropInvalidIndex(session: SqlSession, statement: string) {
  const name = CONCURRENT_INDEX.exec(statement.replace(/--[^\n]*/g, ''))?.[1]
  if (!name) return
  const { rows } = await session(
    'select not indisvalid as invalid from pg_index where indexrelid = to_regclass($1)',
    [name],
  )
  if ((rows[0] as { invalid?: boolean } | undefined)?.invalid) {
    await session(`drop index concurrently if exists ${name}`)
  }
}

async function record(session: SqlSession, migration: Migration) {
  await session(`insert into ${APPLIED_TABLE} (hash, created_at) values ($1, $2)`, [
    migration.hash,
    migration.when,
  ])
}

/** PostgreSQL's lock_not_available: lock_timeout passed while waiting for a lock. */
const LOCK_NOT_AVAILABLE = '55P03'

/**
 * Runs `attempt` until it does not fail for want of a lock, waiting between tries (exponential, with jitter,
 * so that several blocked runners do not come back together), at most `lockAttempts` times.
 */
async function retryingLocks(tag: string, options: MigrateOptions, attempt: () => Promise<void>) {
  const attempts = options.lockAttempts ?? MIGRATION_DEFAULTS.lockAttempts
  const lockTimeoutMs = options.lockTimeoutMs ?? MIGRATION_DEFAULTS.lockTimeoutMs
  for (let tried = 1; ; tried++) {
    try {
      return await attempt()
    } catch (error) {
      if ((error as { code?: string }).code !== LOCK_NOT_AVAILABLE || tried >= attempts) throw error
      const delayMs = retryDelay(tried, options)
      options.log?.warn(
        `migration ${tag} did not get its lock within ${lockTimeoutMs} ms (try ${tried} of ${attempts}): trying again in ${delayMs} ms`,
      )
      await new Promise((resolve) => setTimeout(resolve, delayMs))
    }
  }
}

/** Half the exponential delay, plus up to as much again at random. */
function retryDelay(tried: number, options: MigrateOptions): number {
  const ceiling = Math.min(
    (options.retryDelayMs ?? 500) * 2 ** (tried - 1),
    options.maxRetryDelayMs ?? 30_000,
  )
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2))
}
