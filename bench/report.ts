import type { BaselineResponse } from './baseline.js'
import { type Measurement, ROUND_SECONDS, WARMUP_SECONDS } from './load.js'
import type { ComparedScenario, LoadOptions } from './scenario.js'

export interface Outcome {
  server: Measurement
  baseline: Measurement
  /** The median of the rounds' ratios (each server round over the baseline round right after it). */
  ratio: number
  /** Every round's ratio, sorted. */
  roundRatios: number[]
  /** Total server requests over total baseline requests. */
  overallRatio: number
  passed: boolean
  /** Errors or non-2xx answers on either side: the figures measure something else than intended. */
  failed: boolean
}

export const median = (sorted: number[]) => {
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

const divide = (a: number, b: number) => (b > 0 ? a / b : 0)

/**
 * The ratio is the median of the rounds' ratios: each pair of rounds runs within a few seconds, so a burst
 * of other work on the machine moves one pair, not the figure (bench/README.md, "Run to run").
 */
export function judge(scenario: ComparedScenario, server: Measurement, baseline: Measurement): Outcome {
  const roundRatios = server.rounds
    .map((rps, i) => divide(rps, baseline.rounds[i] ?? 0))
    .sort((a, b) => a - b)
  const ratio = median(roundRatios)
  const unclean = (m: Measurement) => m.errors > 0 || m.non2xx > 0
  return {
    server,
    baseline,
    ratio,
    roundRatios,
    overallRatio: divide(server.requestsPerSecond, baseline.requestsPerSecond),
    passed: ratio >= scenario.target,
    failed: unclean(server) || unclean(baseline),
  }
}

const HEADINGS = ['', 'req/s', 'p50 ms', 'p99 ms', 'non-2xx', 'errors']

function row(name: string, m: Measurement): string[] {
  return [
    name,
    m.requestsPerSecond.toFixed(0),
    m.p50Ms.toFixed(1),
    m.p99Ms.toFixed(1),
    String(m.non2xx),
    String(m.errors),
  ]
}

/** Rows of cells in columns: the first `left` of them left-aligned (names), the others right-aligned. */
export function formatTable(rows: string[][], left = 1): string {
  const columns = Math.max(...rows.map((cells) => cells.length))
  const widths = Array.from({ length: columns }, (_, column) =>
    Math.max(...rows.map((cells) => (cells[column] ?? '').length)),
  )
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column < left ? cell.padEnd(widths[column] ?? 0) : cell.padStart(widths[column] ?? 0),
      )
      .join('   ')
  return rows.map(line).join('\n')
}

export interface ReportInput {
  name: string
  scenario: ComparedScenario
  options: LoadOptions
  response: BaselineResponse
  outcome: Outcome
}

export function formatReport({ name, scenario, options, response, outcome }: ReportInput): string {
  const verdict = outcome.passed ? 'PASS' : 'BELOW'
  const bytes = Buffer.from(response.bodyBase64, 'base64').length
  return [
    `scenario ${name}: ${scenario.description}`,
    `response ${response.status}, ${bytes} bytes of ${response.contentType}`,
    `${options.connections} connections; ${options.durationSeconds} s each in rounds of ${ROUND_SECONDS} s ` +
      `alternating server and baseline, after ${WARMUP_SECONDS} s of warm-up each`,
    '',
    formatTable([HEADINGS, row('server', outcome.server), row('baseline', outcome.baseline)]),
    '',
    `server/baseline req/s: ${outcome.ratio.toFixed(2)} (median of ${outcome.roundRatios.length} rounds, ` +
      `from ${(outcome.roundRatios[0] ?? 0).toFixed(2)} to ${(outcome.roundRatios.at(-1) ?? 0).toFixed(2)}; ` +
      `all requests ${outcome.overallRatio.toFixed(2)})   target >= ${scenario.target}   ${verdict}`,
    ...(outcome.failed ? ['errors or non-2xx answers: the figures are not valid'] : []),
  ].join('\n')
}
