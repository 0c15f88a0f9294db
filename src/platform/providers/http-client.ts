import type { Logger } from '../log/logger.js'
import type { Span } from '../tracing/span.js'
import { currentTraceHeaders, inSpan } from '../tracing/tracing.js'

export interface ProviderRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: string
  query?: Record<string, string | number | boolean | undefined>
  headers?: Record<string, string>
  /** Sent as JSON unless it is already a string. */
  body?: unknown
  timeoutMs?: number
  /** Attempts after the first, on network errors, 429 and 5xx. */
  retries?: number
  /** Connects instead of fetch's own (OutboundAddressPolicy's, which refuses non-public addresses). */
  dispatcher?: RequestInit['dispatcher']
}

export interface ProviderResponse {
  status: number
  headers: Record<string, string>
  body: unknown
}

export class ProviderUnreachable extends Error {}

const SECRET_HEADERS = new Set(['authorization', 'api-key', 'x-api-key', 'on-behalf-of', 'cookie'])
// Any parameter named like a token: `access_token`, Graph's `fb_exchange_token`, `input_token`, ...; and
// the personal data a lookup filters by (Twilio's message list `To` and `From`).
const SECRET_QUERY = /^(api[_-]?key|client_secret|appsecret_proof|key|secret|to|from|email|phone)$|token$/i

/** The URL with the values of secret-looking query parameters replaced, for logs. */
export function redactUrl(url: URL): string {
  const copy = new URL(url)
  // Written as a raw search string: searchParams would percent-encode the marker to %5BREDACTED%5D.
  copy.search = [...copy.searchParams]
    .map(([name, value]) => {
      const shown = SECRET_QUERY.test(name) ? '[REDACTED]' : encodeURIComponent(value)
      return `${encodeURIComponent(name)}=${shown}`
    })
    .join('&')
  return copy.toString()
}

export function redactHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [
      name,
      SECRET_HEADERS.has(name.toLowerCase()) ? '[REDACTED]' : value,
    ]),
  )
}

/** Header names are case-insensitive; one spelling keeps a caller's `Content-Type` from doubling ours. */
function lowerCaseNames(headers: Record<string, string> = {}): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]))
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

function retryDelayMs(attempt: number, retryAfter: string | null): number {
  const seconds = retryAfter ? Number(retryAfter) : Number.NaN
  if (Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 10_000)
  return Math.min(200 * 2 ** attempt, 5_000)
}

function buildUrl(request: ProviderRequest): URL {
  const url = new URL(request.url)
  for (const [name, value] of Object.entries(request.query ?? {})) {
    if (value !== undefined) url.searchParams.set(name, String(value))
  }
  return url
}

async function readBody(response: Response): Promise<unknown> {
  const text = await response.text()
  if (!text) return null
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

/** A span per attempt, as OpenTelemetry's HTTP conventions have it; the URL as logged (secrets redacted). */
const clientSpan = (url: URL, redactedUrl: string, method: string, attempt: number) =>
  ({
    kind: 'client',
    attributes: {
      'http.request.method': method,
      'server.address': url.hostname,
      'server.port': Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
      'url.full': redactedUrl,
      'http.request.resend_count': attempt > 0 ? attempt : undefined,
    },
  }) as const

function responded(span: Span, response: Response): Response {
  span.setAttributes({ 'http.response.status_code': response.status })
  if (response.status >= 400) span.fail(response.status)
  return response
}

/**
 * The one outbound HTTP call of every provider client: a timeout, bounded retries with backoff on
 * network errors, 429 and 5xx, and a log line per attempt with secrets redacted.
 * Answers every HTTP status; throws ProviderUnreachable only when no response came at all.
 */
export async function providerRequest(request: ProviderRequest, log?: Logger): Promise<ProviderResponse> {
  const url = buildUrl(request)
  const method = request.method ?? 'GET'
  const retries = request.retries ?? 2
  const headers: Record<string, string> = { accept: 'application/json', ...lowerCaseNames(request.headers) }
  let body: string | undefined
  if (request.body !== undefined) {
    body = typeof request.body === 'string' ? request.body : JSON.stringify(request.body)
    headers['content-type'] ??= 'application/json'
  }
  const logged = { method, url: redactUrl(url), headers: redactHeaders(headers) }

  for (let attempt = 0; ; attempt++) {
    const started = Date.now()
    try {
      const response = await inSpan(method, clientSpan(url, logged.url, method, attempt), async (span) =>
        responded(
          span,
          await fetch(url, {
            method,
            // The callee continues the trace when it takes part in it.
            headers: { ...headers, ...currentTraceHeaders() },
            body,
            signal: AbortSignal.timeout(request.timeoutMs ?? 10_000),
            ...(request.dispatcher && { dispatcher: request.dispatcher }),
          }),
        ),
      )
      const retryable = response.status === 429 || response.status >= 500
      log?.info(
        { provider: logged, status: response.status, ms: Date.now() - started, attempt },
        'provider call',
      )
      if (retryable && attempt < retries) {
        await response.body?.cancel()
        await sleep(retryDelayMs(attempt, response.headers.get('retry-after')))
        continue
      }
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await readBody(response),
      }
    } catch (error) {
      log?.warn({ provider: logged, ms: Date.now() - started, attempt, err: error }, 'provider call failed')
      if (attempt >= retries)
        throw new ProviderUnreachable(`${method} ${url.origin}${url.pathname} failed: ${error}`, {
          cause: error,
        })
      await sleep(retryDelayMs(attempt, null))
    }
  }
}
