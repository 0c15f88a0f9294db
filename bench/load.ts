import autocannon from 'autocannon'
import type { BaselineResponse } from './baseline.js'
import { type LatencyHistogram, latencyPercentile, newLatencyHistogram, recordLatency } from './latency.js'
import type { BenchRequest, LoadOptions } from './scenario.js'

const CAPTURE_TIMEOUT_MS = 15_000
// Long enough for V8 to optimise the hot path before anything is counted.
export const WARMUP_SECONDS = 3
// Short rounds, alternating server and baseline, so that a change of background load on the machine
// falls on both sides instead of on whichever ran at that moment.
export const ROUND_SECONDS = 2

export interface Measurement {
  requestsPerSecond: number
  /** Req/s of each round, in order. */
  rounds: number[]
  p50Ms: number
  p99Ms: number
  non2xx: number
  /** Connection errors, timeouts included. */
  errors: number
}

interface Tally {
  rounds: number[]
  requests: number
  seconds: number
  non2xx: number
  errors: number
  latencies: LatencyHistogram
}

/** Headers every server sets itself: the baselines' own take their place. */
const OWN_HEADERS = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding'])

/** Sends the request once; its response is what the baselines will repeat. It must be a 2xx. */
export async function captureResponse(baseUrl: string, request: BenchRequest): Promise<BaselineResponse> {
  const response = await fetch(new URL(request.path, baseUrl), {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: AbortSignal.timeout(CAPTURE_TIMEOUT_MS),
  })
  const body = Buffer.from(await response.arrayBuffer())
  if (!response.ok) {
    throw new Error(`${request.method} ${request.path} answered ${response.status}: ${body.toString()}`)
  }
  return {
    status: response.status,
    contentType: response.headers.get('content-type') ?? 'application/json',
    bodyBase64: body.toString('base64'),
    headers: Object.fromEntries([...response.headers].filter(([name]) => !OWN_HEADERS.has(name))),
    method: request.method,
    path: request.path.split('?', 1)[0] as string,
  }
}

/** One of the servers a run alternates between, and the request it is sent. */
export interface Side {
  baseUrl: string
  request: BenchRequest
  /** Untimed, after each of its rounds: e.g. until the jobs its writes queued are done. */
  settle?: () => Promise<void>
}

/**
 * Warms each side up, then drives them in turn, a round of ROUND_SECONDS each, until each has had
 * `durationSeconds`: a change of background load on the machine falls on every side instead of one.
 */
export async function alternate(sides: Side[], options: LoadOptions): Promise<Measurement[]> {
  for (const side of sides) {
    await drive(side.baseUrl, side.request, options.connections, WARMUP_SECONDS)
    await side.settle?.()
  }
  const tallies = sides.map(newTally)
  for (const seconds of roundLengths(options.durationSeconds)) {
    for (const [i, side] of sides.entries()) {
      await measureRound(tallies[i] as Tally, side.baseUrl, side.request, options.connections, seconds)
      await side.settle?.()
    }
  }
  return tallies.map(summarize)
}

/** `durationSeconds` cut into rounds of ROUND_SECONDS, the last one shorter when it does not divide. */
function roundLengths(durationSeconds: number): number[] {
  const lengths = Array<number>(Math.floor(durationSeconds / ROUND_SECONDS)).fill(ROUND_SECONDS)
  const rest = durationSeconds % ROUND_SECONDS
  return rest > 0 ? [...lengths, rest] : lengths
}

function newTally(): Tally {
  return { rounds: [], requests: 0, seconds: 0, non2xx: 0, errors: 0, latencies: newLatencyHistogram() }
}

async function measureRound(
  tally: Tally,
  baseUrl: string,
  request: BenchRequest,
  connections: number,
  seconds: number,
): Promise<void> {
  const result = await drive(baseUrl, request, connections, seconds, tally.latencies)
  tally.rounds.push(result.requests.total / result.duration)
  tally.requests += result.requests.total
  tally.seconds += result.duration
  tally.non2xx += result.non2xx
  tally.errors += result.errors
}

function summarize(tally: Tally): Measurement {
  return {
    requestsPerSecond: tally.seconds > 0 ? tally.requests / tally.seconds : 0,
    rounds: tally.rounds,
    p50Ms: latencyPercentile(tally.latencies, 0.5),
    p99Ms: latencyPercentile(tally.latencies, 0.99),
    non2xx: tally.non2xx,
    errors: tally.errors,
  }
}

/** One autocannon run in this process; each response time goes into `latencies` when given. */
function drive(
  baseUrl: string,
  request: BenchRequest,
  connections: number,
  seconds: number,
  latencies?: LatencyHistogram,
): Promise<autocannon.Result> {
  return new Promise((resolve, reject) => {
    const options: autocannon.Options = {
      url: new URL(request.path, baseUrl).href,
      method: request.method,
      headers: request.headers,
      body: request.body,
      ...(request.headersInTurn && { requests: request.headersInTurn.map((headers) => ({ headers })) }),
      ...((request.next || request.onAnswer) && { requests: [changingRequest(request)] }),
      connections,
      duration: seconds,
    }
    const instance = autocannon(options, (error, result) => (error ? reject(error) : resolve(result)))
    if (latencies) instance.on('response', (_client, _status, _bytes, ms) => recordLatency(latencies, ms))
  })
}

/** autocannon's request of a `BenchRequest` that changes for each sending, or reads each answer. */
function changingRequest({ next, onAnswer }: BenchRequest): autocannon.Request {
  return {
    ...(next && {
      setupRequest: (sent: autocannon.Request) => {
        const change = next()
        return { ...sent, ...change, headers: { ...sent.headers, ...change.headers } }
      },
    }),
    ...(onAnswer && { onResponse: (status: number, body: string) => onAnswer(status, body) }),
  }
}
