import pg from 'pg'
import type { SqlSession } from '../src/platform/db/migrations.js'

/**
 * What a migration's statements do to the tables while `npm run bench:migrate` runs them: each statement's
 * time, timed on the migration's own session, and the locks its session holds or waits for, sampled from
 * `pg_locks` on a connection of their own every few milliseconds (a lock held for less than the interval may
 * go unseen; a statement's time bounds it).
 */

/** The migration's connections carry this `application_name`, by which the sampler finds them. */
export const MIGRATION_APPLICATION = 'bench:migrate'

/** One statement the runner sent, in the bench's clock. */
export interface StatementTime {
  text: string
  startedMs: number
  ms: number
  /** PostgreSQL's error code when it failed (55P03: a lock not had within lock_timeout, tried again). */
  error?: string
  /** On a commit: the table locks its transaction held, which it releases (too brief for the sampler). */
  locks?: { table: string; mode: string }[]
}

/** The locks the session's own transaction holds on the service's tables, asked just before it commits. */
const OWN_LOCKS_SQL = `
  select c.relname as table, l.mode from pg_locks l join pg_class c on c.oid = l.relation
  where l.pid = pg_backend_pid() and l.locktype = 'relation' and c.relkind in ('r', 'p')
    and c.relnamespace = 'public'::regnamespace`

/**
 * The runner's session on `client`, each statement timed into `times` with the bench's clock `now`, and before
 * each commit, the locks the transaction holds.
 */
export function timedSession(client: pg.Client, times: StatementTime[], now: () => number): SqlSession {
  return async (text, values) => {
    // Before the clock of the commit: the question adds a fraction of a millisecond to the locks' hold.
    const locks = text === 'commit' ? (await client.query(OWN_LOCKS_SQL)).rows : undefined
    const startedMs = now()
    const time: StatementTime = { text, startedMs, ms: 0, ...(locks && { locks }) }
    times.push(time)
    try {
      return await client.query(text, values)
    } catch (error) {
      time.error = (error as { code?: string }).code ?? 'error'
      throw error
    } finally {
      time.ms = now() - startedMs
    }
  }
}

/** A stretch of samples in which the migration's session held (or waited for) one lock on one table. */
export interface LockSpan {
  /** The table, or `transactions` for a wait on other transactions (a CONCURRENTLY build's). */
  table: string
  mode: string
  granted: boolean
  firstMs: number
  lastMs: number
  /** The statements the session was running or had last run while it held the lock. */
  statements: string[]
}

interface LockRow {
  relation: string
  mode: string
  granted: boolean
  query: string
}

/**
 * The migration session's locks on the service's tables, and its waits on other transactions (a CONCURRENTLY
 * build waits for every transaction older than each of its phases); its own transaction id locks aside.
 */
const LOCKS_SQL = `
  select coalesce(c.relname, 'transactions') as relation, l.mode, l.granted, a.query
  from pg_locks l join pg_stat_activity a on a.pid = l.pid
  left join pg_class c on c.oid = l.relation
  where a.application_name = $1 and a.datname = current_database()
    and ((l.locktype = 'relation' and c.relkind in ('r', 'p') and c.relnamespace = 'public'::regnamespace)
      or (l.locktype in ('virtualxid', 'transactionid') and not l.granted))`

/** Requests of the service (any other session of the database) waiting for a lock at one sample. */
const WAITING_SQL = `
  select count(distinct l.pid)::int as waiting
  from pg_locks l join pg_stat_activity a on a.pid = l.pid
  where not l.granted and a.application_name <> $1 and a.datname = current_database()`

export interface LockSampling {
  spans: LockSpan[]
  /** The most sessions of the service seen waiting for a lock at once. */
  mostWaiting: number
  samples: number
}

export interface RunningSampler {
  stop(): Promise<LockSampling>
}

/** Short text of a statement: its first line of SQL, comments aside. */
export const shortStatement = (text: string, length = 70) => {
  const sql = text
    .replace(/--[^\n]*/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
  return sql.length > length ? `${sql.slice(0, length - 1)}…` : sql
}

/** Samples every `intervalMs` until stopped, each sample after the last has answered. */
export async function startLockSampler(
  databaseUrl: string,
  now: () => number,
  intervalMs: number,
): Promise<RunningSampler> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench:migrate-locks' })
  client.on('error', () => undefined)
  await client.connect()
  const sampling: LockSampling = { spans: [], mostWaiting: 0, samples: 0 }
  const open = new Map<string, LockSpan>()
  let stopped = false
  const loop = (async () => {
    while (!stopped) {
      const atMs = now()
      const [locks, waiting] = await Promise.all([
        client.query<LockRow>(LOCKS_SQL, [MIGRATION_APPLICATION]),
        client.query<{ waiting: number }>(WAITING_SQL, [MIGRATION_APPLICATION]),
      ])
      addSample(sampling, open, locks.rows, atMs)
      sampling.mostWaiting = Math.max(sampling.mostWaiting, waiting.rows[0]?.waiting ?? 0)
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, intervalMs - (now() - atMs))))
    }
  })()
  return {
    stop: async () => {
      stopped = true
      await loop
      await client.end()
      return sampling
    },
  }
}

/** Extends the spans of the locks still held, closes the others, opens spans for new ones. */
function addSample(sampling: LockSampling, open: Map<string, LockSpan>, rows: LockRow[], atMs: number) {
  sampling.samples++
  const seen = new Set<string>()
  for (const row of rows) {
    const key = `${row.relation} ${row.mode} ${row.granted}`
    if (seen.has(key)) continue
    seen.add(key)
    let span = open.get(key)
    if (!span) {
      span = {
        table: row.relation,
        mode: row.mode,
        granted: row.granted,
        firstMs: atMs,
        lastMs: atMs,
        statements: [],
      }
      open.set(key, span)
      sampling.spans.push(span)
    }
    span.lastMs = atMs
    const statement = shortStatement(row.query)
    if (!span.statements.includes(statement)) span.statements.push(statement)
  }
  for (const key of open.keys()) if (!seen.has(key)) open.delete(key)
}

/**
 * What a lock of the migration stops of the service's statements, by its mode (PostgreSQL's conflict table),
 * held or waited for (a request asking for a conflicting lock queues behind a waiting one too); a wait on
 * other transactions (no lock on a table) stops nothing.
 */
export function blocks({ table, mode }: { table: string; mode: string }): string {
  if (table === 'transactions') return 'nothing'
  if (mode === 'AccessExclusiveLock') return 'reads, writes'
  if (['ExclusiveLock', 'ShareRowExclusiveLock', 'ShareLock'].includes(mode)) return 'writes'
  return 'nothing'
}
