import type { BaselineResponse } from './baseline.js'
import { type Measurement, ROUND_SECONDS, WARMUP_SECONDS } from './load.js'
import type { ComparedScenario, LoadOptions } from './scenario.js'

/** One side of a comparison: its name in the report and what it measured. */
export interface Side {
  name: string
  measurement: Measurement
  /** The CPU time its process used per request answered (all its threads, GC included), in µs. */
  cpuMicrosPerRequest: number
}

/** One side's req/s over another's, with the least ratio that passes, if one is set. */
export interface Comparison {
  of: string
  to: string
  target?: number
}

export interface Ratio extends Comparison {
  /** The median of the rounds' ratios (each round of `of` over the round of `to` in the same turn). */
  ratio: number
  /** Every round's ratio, sorted. */
  roundRatios: number[]
  /** Total requests of `of` over those of `to`. */
  overallRatio: number
  passed: boolean
}

export interface Outcome {
  sides: Side[]
  ratios: Ratio[]
  /** Every ratio with a target met it. */
  passed: boolean
  /** Errors or non-2xx answers on any side: the figures measure something else than intended. */
  failed: boolean
}

export const median = (sorted: number[]) => {
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

const divide = (a: number, b: number) => (b > 0 ? a / b : 0)

/**
 * Each ratio is the median of the rounds' ratios: the sides' rounds of one turn run within seconds of each
 * other, so a burst of other work on the machine moves one turn, not the figure (bench/README.md, "Run to
 * run").
 */
export function judge(sides: Side[], comparisons: Comparison[]): Outcome {
  const measured = (name: string) => sides.find((side) => side.name === name)?.measurement as Measurement
  const ratios = comparisons.map((comparison) => {
    const of = measured(comparison.of)
    const to = measured(comparison.to)
    const roundRatios = of.rounds.map((rps, i) => divide(rps, to.rounds[i] ?? 0)).sort((a, b) => a - b)
    const ratio = median(roundRatios)
    return {
      ...comparison,
      ratio,
      roundRatios,
      overallRatio: divide(of.requestsPerSecond, to.requestsPerSecond),
      passed: comparison.target === undefined || ratio >= comparison.target,
    }
  })
  const unclean = ({ measurement: m }: Side) => m.errors > 0 || m.non2xx > 0
  return { sides, ratios, passed: ratios.every((ratio) => ratio.passed), failed: sides.some(unclean) }
}

const HEADINGS = ['', 'req/s', 'CPU µs/req', 'p50 ms', 'p99 ms', 'non-2xx', 'errors']

function row({ name, measurement: m, cpuMicrosPerRequest }: Side): string[] {
  return [
    name,
    m.requestsPerSecond.toFixed(0),
    cpuMicrosPerRequest.toFixed(0),
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

function ratioLine(ratio: Ratio): string {
  const verdict =
    ratio.target === undefined ? '' : `   target >= ${ratio.target}   ${ratio.passed ? 'PASS' : 'BELOW'}`
  return (
    `${ratio.of} / ${ratio.to} req/s: ${ratio.ratio.toFixed(2)} (median of ${ratio.roundRatios.length} rounds, ` +
    `from ${(ratio.roundRatios[0] ?? 0).toFixed(2)} to ${(ratio.roundRatios.at(-1) ?? 0).toFixed(2)}; ` +
    `all requests ${ratio.overallRatio.toFixed(2)})${verdict}`
  )
}

export function formatReport({ name, scenario, options, response, outcome }: ReportInput): string {
  const bytes = Buffer.from(response.bodyBase64, 'base64').length
  return [
    `scenario ${name}: ${scenario.description}`,
    `response ${response.status}, ${bytes} bytes of ${response.contentType}`,
    `${options.connections} connections; ${options.durationSeconds} s each in rounds of ${ROUND_SECONDS} s, ` +
      `taking turns (${outcome.sides.map((side) => side.name).join(', ')}), after ${WARMUP_SECONDS} s of warm-up each`,
    '',
    formatTable([HEADINGS, ...outcome.sides.map(row)]),
    '',
    ...outcome.ratios.map(ratioLine),
    ...(outcome.failed ? ['errors or non-2xx answers: the figures are not valid'] : []),
  ].join('\n')
}
