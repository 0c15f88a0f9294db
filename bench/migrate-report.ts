import { basename } from 'node:path'
import type { Answer } from './migrate-load.js'
import { blocks, type LockSpan, type StatementTime, shortStatement } from './migrate-locks.js'
import type { AppliedMigration, MigrationMeasurement } from './migrate-run.js'
import { formatTable } from './report.js'

/**
 * The verdict and the tables of `npm run bench:migrate`. The target for every migration from 0035 on,
 * applied while the service serves: no request waits more than 2 s, and none answers 5xx (a 503 of the
 * service's own lock_timeout included) or not at all.
 */
export const LONGEST_WAIT_MS = 2_000

export type Verdict = 'PASS' | 'FAIL' | 'INVALID'

/** The requests of one stretch of the run. */
export interface Phase {
  requests: number
  p50Ms: number
  p99Ms: number
  longestMs: number
  /** 5xx answers. */
  failed: number
  /** No answer: a reset connection, or none within 30 s. */
  unanswered: number
  /** Other answers than 2xx and 5xx: the mix itself is broken. */
  other: number
}

export interface Judged {
  measurement: MigrationMeasurement
  before: Phase
  /** The requests in flight at any moment of the migration. */
  during: Phase
  after: Phase
  /** Before, during and after together. */
  all: Phase
  verdict: Verdict
  sampleMs: number
}

const percentile = (sorted: number[], fraction: number) =>
  sorted.length === 0 ? 0 : (sorted[Math.max(0, Math.ceil(fraction * sorted.length) - 1)] as number)

export function phaseOf(answers: Answer[]): Phase {
  const sorted = answers.map((answer) => answer.ms).sort((a, b) => a - b)
  const count = (test: (status: number) => boolean) => answers.filter((a) => test(a.status)).length
  return {
    requests: answers.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    longestMs: sorted.at(-1) ?? 0,
    failed: count((status) => status >= 500),
    unanswered: count((status) => status === 0),
    other: count((status) => status > 0 && (status < 200 || (status > 299 && status < 500))),
  }
}

export function judge(measurement: MigrationMeasurement, sampleMs: number): Judged {
  const { countedFromMs, startMs, endMs } = measurement.window
  const counted = measurement.answers.filter((a) => a.startedMs >= countedFromMs)
  const before = phaseOf(counted.filter((a) => a.startedMs + a.ms < startMs))
  const during = phaseOf(counted.filter((a) => a.startedMs < endMs && a.startedMs + a.ms >= startMs))
  const after = phaseOf(counted.filter((a) => a.startedMs >= endMs))
  const all = phaseOf(counted)
  const verdict =
    all.other > 0
      ? 'INVALID'
      : all.longestMs > LONGEST_WAIT_MS || all.failed > 0 || all.unanswered > 0 || measurement.error
        ? 'FAIL'
        : 'PASS'
  return { measurement, before, during, after, all, verdict, sampleMs }
}

const ms = (value: number) => `${Math.round(value).toLocaleString('en-US')} ms`

/** A span's length, counted as the samples it covers (a lock seen once was held up to one interval). */
export const spanMs = (span: LockSpan, sampleMs: number) => span.lastMs - span.firstMs + sampleMs

/** The runner's own statements (its advisory lock, bookkeeping, transaction control), not the migration's. */
const BOOKKEEPING =
  /^(select |begin|commit|rollback|set |reset |create schema if not exists drizzle|create table if not exists drizzle|insert into drizzle)/i

const isOwn = (text: string) => text !== '' && !BOOKKEEPING.test(text)

/** The statements the runner sent for one migration. */
const statementsOf = (measurement: MigrationMeasurement, migration: AppliedMigration) =>
  measurement.statements.filter(
    (s) => s.startedMs >= migration.startedMs && s.startedMs < migration.startedMs + migration.ms,
  )

/** A migration's transaction that committed: from its last begin to its commit, and the locks it held. */
function transactionOf(statements: StatementTime[]) {
  const begun = statements.filter((s) => s.text === 'begin').at(-1)
  const committed = statements.filter((s) => s.text === 'commit').at(-1)
  if (!begun || !committed) return undefined
  const endMs = committed.startedMs + committed.ms
  return { startMs: begun.startedMs, endMs, ms: endMs - begun.startedMs, locks: committed.locks ?? [] }
}

/** The migration's statements, each with its migration's tag, and each transaction from begin to commit. */
function statementRows(measurement: MigrationMeasurement): string[][] {
  const rows: string[][] = []
  for (const migration of measurement.migrations) {
    const statements = statementsOf(measurement, migration)
    for (const statement of statements) {
      const text = shortStatement(statement.text)
      if (!isOwn(text)) continue
      const outcome = statement.error === '55P03' ? 'lock not had: tried again' : (statement.error ?? 'done')
      rows.push([migration.tag, text, outcome, ms(statement.ms)])
    }
    const transaction = transactionOf(statements)
    if (transaction) {
      rows.push([
        migration.tag,
        '(its transaction, begin to commit: its locks held until commit)',
        '',
        ms(transaction.ms),
      ])
    }
  }
  return rows
}

/** A lock the migration took or waited for, how long, and what it stops. */
interface LockRow {
  table: string
  mode: string
  how: 'held' | 'waited for' | 'held in its transaction'
  ms: number
  /** Sampled (about, to the interval), or an upper bound (a transaction's begin to commit). */
  bound: '≈' | '≤'
  statements: string[]
}

/** The table locks each migration's transaction held at its commit, each for at most begin to commit. */
function transactionLocks(
  measurement: MigrationMeasurement,
): (LockRow & { startMs: number; endMs: number })[] {
  return measurement.migrations.flatMap((migration) => {
    const statements = statementsOf(measurement, migration)
    const transaction = transactionOf(statements)
    if (!transaction) return []
    const own = [...new Set(statements.map((s) => shortStatement(s.text)).filter(isOwn))]
    return transaction.locks.map(({ table, mode }) => ({
      table,
      mode,
      how: 'held in its transaction' as const,
      ms: transaction.ms,
      bound: '≤' as const,
      statements: own,
      startMs: transaction.startMs,
      endMs: transaction.endMs,
    }))
  })
}

/**
 * Every lock of the run: those of the transactions, then the samples, but for a hold a transaction's own
 * already counts (the same table and mode, seen while it ran: a sample's time is when it was asked for, up to
 * an interval before PostgreSQL answered it on a busy machine, hence the margin).
 */
function lockRowsOf(judged: Judged): LockRow[] {
  const committed = transactionLocks(judged.measurement)
  const covered = (span: LockSpan) =>
    span.granted &&
    committed.some(
      (t) =>
        t.table === span.table &&
        t.mode === span.mode &&
        span.lastMs + judged.sampleMs >= t.startMs &&
        span.firstMs - judged.sampleMs <= t.endMs,
    )
  const sampled = judged.measurement.locks.spans
    .filter((span) => !covered(span))
    .map(
      (span): LockRow => ({
        table: span.table,
        mode: span.mode,
        how: span.granted ? 'held' : 'waited for',
        ms: spanMs(span, judged.sampleMs),
        bound: '≈',
        statements: span.statements.filter(isOwn),
      }),
    )
  return [...committed, ...sampled]
}

function lockRows(judged: Judged): string[][] {
  return lockRowsOf(judged).map((row) => [
    row.table,
    row.mode.replace(/Lock$/, ''),
    row.how,
    `${row.bound} ${ms(row.ms)}`,
    blocks(row),
    row.statements.join('; '),
  ])
}

const phaseRow = (name: string, phase: Phase) => [
  name,
  String(phase.requests),
  ms(phase.p50Ms),
  ms(phase.p99Ms),
  ms(phase.longestMs),
  String(phase.failed),
  String(phase.unanswered),
  String(phase.other),
]

/** The detail of one measurement: its statements, its locks, the requests before, during and after. */
export function formatMeasurement(judged: Judged): string {
  const { measurement } = judged
  const total = measurement.window.endMs - measurement.window.startMs
  return [
    `${basename(measurement.folder)}: ${measurement.migrations.map((m) => `${m.tag} ${ms(m.ms)}`).join(', ')} ` +
      `(in all ${ms(total)})${measurement.error ? `; FAILED ${measurement.error}` : ''}: ${judged.verdict}`,
    '',
    formatTable([['migration', 'statement', 'outcome', 'time'], ...statementRows(measurement)], 3),
    '',
    formatTable(
      [
        ['table', 'lock', '', `time (sampled every ${judged.sampleMs} ms)`, 'stops', 'statements'],
        ...lockRows(judged),
      ],
      6,
    ),
    `most requests of the service waiting for a lock at once: ${measurement.locks.mostWaiting} (${measurement.locks.samples} samples)`,
    '',
    formatTable(
      [
        ['requests', 'count', 'p50', 'p99', 'longest', '5xx', 'no answer', 'other non-2xx'],
        phaseRow('before', judged.before),
        phaseRow('during', judged.during),
        phaseRow('after', judged.after),
      ],
      1,
    ),
  ].join('\n')
}

/** The longest hold of each table and mode, e.g. `contacts ShareUpdateExclusive ≈ 4,210 ms`. */
function lockSummary(judged: Judged): string {
  const longest = new Map<string, LockRow>()
  for (const row of lockRowsOf(judged)) {
    if (row.how === 'waited for') continue
    const key = `${row.table} ${row.mode.replace(/Lock$/, '')}`
    if ((longest.get(key)?.ms ?? -1) < row.ms) longest.set(key, row)
  }
  return [...longest].map(([key, row]) => `${key} ${row.bound} ${ms(row.ms)}`).join('; ') || 'none seen'
}

/** One row per measurement: what the README's table holds. */
export function formatSummary(results: Judged[]): string {
  const rows = results.map((judged) => {
    const { window } = judged.measurement
    return [
      basename(judged.measurement.folder),
      ms(window.endMs - window.startMs),
      lockSummary(judged),
      ms(judged.all.longestMs),
      `${ms(judged.before.p99Ms)} / ${ms(judged.during.p99Ms)}`,
      `${judged.all.failed + judged.all.unanswered} / ${judged.all.other}`,
      judged.verdict,
    ]
  })
  const header = ['migration', 'time', 'locks held', 'longest wait', 'p99 before / during', '5xx / other', '']
  return formatTable([header, ...rows], 1)
}
