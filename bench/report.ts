import { loadavg } from 'node:os'
import type { BaselineResponse } from './baseline.js'
import { type LoadOptions, type Measurement, ROUND_SECONDS, WARMUP_SECONDS } from './load.js'
import type { ComparedScenario } from './scenario.js'

export interface Outcome {
  server: Measurement
  baseline: Measurement
  ratio: number
  passed: boolean
  /** Errors or non-2xx answers on either side: the figures measure something else than intended. */
  failed: boolean
}

export function judge(scenario: ComparedScenario, server: Measurement, baseline: Measurement): Outcome {
  const ratio = baseline.requestsPerSecond > 0 ? server.requestsPerSecond / baseline.requestsPerSecond : 0
  const unclean = (m: Measurement) => m.errors > 0 || m.non2xx > 0
  return {
    server,
    baseline,
    ratio,
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

function formatTable(rows: string[][]): string {
  const widths = HEADINGS.map((_, column) => Math.max(...rows.map((cells) => (cells[column] ?? '').length)))
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column === 0 ? cell.padEnd(widths[0] ?? 0) : cell.padStart(widths[column] ?? 0),
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
    `server/baseline req/s: ${outcome.ratio.toFixed(2)}   target >= ${scenario.target}   ${verdict}`,
    ...(outcome.failed ? ['errors or non-2xx answers: the figures are not valid'] : []),
  ].join('\n')
}

/** The machine's load average (1, 5, 15 min), printed beside measured figures: a busy machine gives less. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
