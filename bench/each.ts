import autocannon from 'autocannon'
import { VIA_TLS_PROXY } from './scenario.js'

/** One request of a run that sends each request once: what differs between them. */
export interface EachRequest {
  /** Method and path (with query) of this request when they differ from the run's POST to its URL. */
  method?: 'GET' | 'POST'
  path?: string
  headers?: Record<string, string>
  body: string
}

export interface SentEach {
  /** From the first request sent to the last answer received. */
  seconds: number
  p50Ms: number
  p99Ms: number
  /** Every response time (ms), sorted. */
  latencies: number[]
  /** Connection errors and timeouts. */
  errors: number
  /** Every answer, in the order received; `body` only when the run asked to keep bodies, else empty. */
  answers: { status: number; body: string }[]
}

const REQUEST_TIMEOUT_SECONDS = 30

export const percentile = (sorted: number[], fraction: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(fraction * sorted.length) - 1))] ?? 0

/**
 * POSTs each request once, for requests that cannot be repeated (single-use codes, rotating tokens), on
 * `connections` keep-alive connections: autocannon with `amount`, each connection taking the next unsent
 * request whenever it has an answer. Timed here, not by autocannon, which only notices the end at its next
 * one-second sample. Bodies are kept only with `keepBodies`: autocannon then buffers every one, work the
 * bench would take from the server it shares the machine with (20 kB lists, 10,000 times, for nothing).
 */
export function postEach(
  url: string,
  contentType: string,
  requests: EachRequest[],
  connections: number,
  options: { keepBodies?: boolean } = {},
): Promise<SentEach> {
  let next = 0
  let lastAnswerAt = 0
  const answers: SentEach['answers'] = []
  const latencies: number[] = []
  // Only sent if autocannon asks for more than `amount` (a connection dropped and reopened, an error anyway).
  const spare: EachRequest = { body: '' }
  const startedAt = performance.now()
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url,
        method: 'POST',
        headers: { 'content-type': contentType, ...VIA_TLS_PROXY },
        connections: Math.min(connections, requests.length),
        amount: requests.length,
        timeout: REQUEST_TIMEOUT_SECONDS,
        requests: [
          {
            setupRequest: (request) => {
              const { method, path, headers, body } = requests[next++] ?? spare
              return {
                ...request,
                ...(method && { method }),
                ...(path && { path }),
                headers: { ...request.headers, ...headers },
                body,
              }
            },
            ...(options.keepBodies && {
              onResponse: (status: number, body: string) => {
                answers.push({ status, body })
              },
            }),
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error)
        latencies.sort((a, b) => a - b)
        resolve({
          seconds: (lastAnswerAt - startedAt) / 1000,
          p50Ms: percentile(latencies, 0.5),
          p99Ms: percentile(latencies, 0.99),
          latencies,
          errors: result.errors + result.timeouts,
          answers,
        })
      },
    )
    instance.on('response', (_client, status, _bytes, ms) => {
      lastAnswerAt = performance.now()
      latencies.push(ms)
      if (!options.keepBodies) answers.push({ status, body: '' })
    })
  })
}
