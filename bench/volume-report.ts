import type { Measurement } from './load.js'
import type { CpuShares } from './machine.js'
import { formatTable } from './report.js'
import type { AccountLabel } from './volume-routes.js'

/**
 * The verdicts and the printed table of `npm run bench:volume`. The target for every route: at the
 * large scale against the small one, throughput at least 0.67 times and p99 at most 1.5 times (the cost grows
 * by at most half while the data grows a hundredfold), and a small account's figures unchanged by its
 * neighbours' volume (its own rows, which the seed keeps about equal at every scale, compared the same way).
 */
export const TARGET = { throughput: 0.67, p99: 1.5 } as const

export type Verdict = 'PASS' | 'FAIL' | 'INVALID'

export interface RouteResult {
  route: string
  /** Whose request: one of the two accounts, or the operator across every account. */
  account: AccountLabel | 'operator'
  small?: Measurement
  large?: Measurement
  /** Req/s at the large scale over req/s at the small one. */
  throughputRatio?: number
  /** p99 at the large scale over p99 at the small one. */
  p99Ratio?: number
  verdict: Verdict
  /** Why the route could not be measured (INVALID), or what else went wrong. */
  note?: string
  /** How the CPUs' time went while the route ran (other work: other sessions on the machine). */
  cpu?: CpuShares
}

/** The scale a database was seeded at, with its rows per table, and what each account holds of them. */
export interface ScaleReport {
  label: 'small' | 'large'
  scale: number
  database: string
  rows: Record<string, number>
  seedSeconds: number
  accounts: { label: AccountLabel; name: string; rows: Record<string, number> }[]
}

const unclean = (m: Measurement) => m.errors > 0 || m.non2xx > 0

export function judgeRoute(
  route: string,
  account: RouteResult['account'],
  small: Measurement,
  large: Measurement,
  cpu: CpuShares | undefined,
): RouteResult {
  const throughputRatio = small.requestsPerSecond > 0 ? large.requestsPerSecond / small.requestsPerSecond : 0
  const p99Ratio = small.p99Ms > 0 ? large.p99Ms / small.p99Ms : Number.POSITIVE_INFINITY
  const invalid = unclean(small) || unclean(large)
  const passed = throughputRatio >= TARGET.throughput && p99Ratio <= TARGET.p99
  return {
    route,
    account,
    small,
    large,
    throughputRatio,
    p99Ratio,
    verdict: invalid ? 'INVALID' : passed ? 'PASS' : 'FAIL',
    ...(invalid && {
      note: `non-2xx ${small.non2xx} and ${large.non2xx}, errors ${small.errors} and ${large.errors}`,
    }),
    cpu,
  }
}

const count = (n: number) => n.toLocaleString('en')
const ms = (value: number | undefined) => (value === undefined ? '' : value.toFixed(1))
const ratio = (value: number | undefined) => (value === undefined ? '' : value.toFixed(2))
const percent = (share: number | undefined) => (share === undefined ? '' : `${(100 * share).toFixed(0)} %`)

/** The table: a row per route and account, the two scales side by side, their ratios and the verdict. */
export function formatResults(results: RouteResult[], scales: [ScaleReport, ScaleReport]): string {
  const [small, large] = scales.map((s) => `at ${s.scale}`)
  const headings = [
    'route',
    'account',
    `req/s ${small}`,
    `req/s ${large}`,
    'ratio',
    `p50 ms ${small}`,
    `p50 ms ${large}`,
    `p99 ms ${small}`,
    `p99 ms ${large}`,
    'ratio',
    '',
    'other CPU',
  ]
  const rows = results.map((r) => [
    r.route,
    r.account,
    r.small ? r.small.requestsPerSecond.toFixed(0) : '',
    r.large ? r.large.requestsPerSecond.toFixed(0) : '',
    ratio(r.throughputRatio),
    ms(r.small?.p50Ms),
    ms(r.large?.p50Ms),
    ms(r.small?.p99Ms),
    ms(r.large?.p99Ms),
    ratio(r.p99Ratio),
    r.verdict,
    percent(r.cpu?.other),
  ])
  const notes = results.filter((r) => r.note).map((r) => `${r.route} (${r.account}): ${r.note}`)
  const passed = results.filter((r) => r.verdict === 'PASS').length
  return [
    formatTable([headings, ...rows], 2),
    '',
    `PASS: req/s ratio >= ${TARGET.throughput} and p99 ratio <= ${TARGET.p99}, the large scale against the small; ` +
      `${passed} of ${results.length} rows pass. The small account's rows compare it with itself: it holds about ` +
      "the same rows at both scales (below), among neighbours holding a hundred times more. 'other CPU': the " +
      "share of the machine's CPU time that went to work outside the bench, its servers and PostgreSQL.",
    ...notes,
  ].join('\n')
}

/** The rows each scale ran against, per table and in all, and the two accounts' own. */
export function formatRows(scales: [ScaleReport, ScaleReport]): string {
  const tables = [...new Set(scales.flatMap((s) => Object.keys(s.rows)))].sort()
  const total = (s: ScaleReport) => Object.values(s.rows).reduce((sum, n) => sum + n, 0)
  const rowsTable = formatTable([
    ['table', ...scales.map((s) => `rows at ${s.scale}`)],
    ...tables.map((table) => [table, ...scales.map((s) => count(s.rows[table] ?? 0))]),
    ['total', ...scales.map((s) => count(total(s)))],
  ])
  const accounts = scales.flatMap((s) => s.accounts.map((a) => ({ ...a, scale: s.scale })))
  const accountTables = [...new Set(accounts.flatMap((a) => Object.keys(a.rows)))]
  const accountsTable = formatTable([
    ['the accounts hold', ...accounts.map((a) => `${a.label} at ${a.scale}`)],
    ['', ...accounts.map((a) => a.name)],
    ...accountTables.map((table) => [table, ...accounts.map((a) => count(a.rows[table] ?? 0))]),
  ])
  const seeded = scales
    .map((s) => `--scale ${s.scale}: database ${s.database}, seeded in ${s.seedSeconds} s`)
    .join('; ')
  return [rowsTable, '', accountsTable, '', seeded].join('\n')
}
