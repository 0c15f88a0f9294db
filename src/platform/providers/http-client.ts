import type { Logger } from '../log/logger.js'
import type { Span } from '../tracing/span.js'
import { currentTraceHeaders, inSpan } from '../tracing/tracing.js'
import {
  callProvider,
  type ProviderName,
  ProviderUnavailable,
  providerTimeoutMs,
} from './provider-circuits.js'

export interface ProviderRequest {
  /** Whose circuit and bulkhead the call goes through (provider-circuits.ts). */
  provider: ProviderName
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  url: string
  query?: Record<string, string | number | boolean | undefined>
  headers?: Record<string, string>
  /** Sent as JSON unless it is already a string. */
  body?: unknown
  /** How long an attempt may take; PROVIDER_TIMEOUT_MS unless told. */
  timeoutMs?: number
  /** Attempts after the first, on network errors, 429 and 5xx, each only after a short wait. */
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

/**
 * The longest wait before retrying within a call. A provider asking for longer is answered as it answered:
 * a job fails and the queue retries it later, instead of sleeping in a worker through a provider's outage.
 */
const MAX_RETRY_WAIT_MS = 1_000

/** How long to wait before the next attempt, or null when the wait would be longer than a call may hold. */
function retryDelayMs(attempt: number, retryAfter: string | null): number | null {
  const seconds = retryAfter ? Number(retryAfter) : Number.NaN
  const wait = Number.isFinite(seconds) && seconds >= 0 ? seconds * 1000 : 200 * 2 ** attempt
  return wait > MAX_RETRY_WAIT_MS ? null : wait
}

/** An answer that counts as the provider failing, towards opening its circuit; a 4xx is the caller's. */
const providerFailed = (response: Response) => response.status >= 500

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
 * The one outbound HTTP call of every provider client: each attempt through the provider's circuit and
 * bulkhead (provider-circuits.ts) with a timeout, bounded retries after short waits on network errors, 429
 * and 5xx, and a log line per attempt with secrets redacted. Answers every HTTP status; throws
 * ProviderUnreachable when no response came at all, and ProviderUnavailable when the circuit or the
 * bulkhead refused the attempt (never retried here: the refusal says when to come back).
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
      const response = await callProvider(
        request.provider,
        () =>
          inSpan(method, clientSpan(url, logged.url, method, attempt), async (span) =>
            responded(
              span,
              await fetch(url, {
                method,
                // The callee continues the trace when it takes part in it.
                headers: { ...headers, ...currentTraceHeaders() },
                body,
                signal: AbortSignal.timeout(request.timeoutMs ?? providerTimeoutMs()),
                ...(request.dispatcher && { dispatcher: request.dispatcher }),
              }),
            ),
          ),
        providerFailed,
      )
      const retryable = response.status === 429 || response.status >= 500
      log?.info(
        { provider: logged, status: response.status, ms: Date.now() - started, attempt },
        'provider call',
      )
      const delay =
        retryable && attempt < retries ? retryDelayMs(attempt, response.headers.get('retry-after')) : null
      if (delay !== null) {
        await response.body?.cancel()
        await sleep(delay)
        continue
      }
      return {
        status: response.status,
        headers: Object.fromEntries(response.headers.entries()),
        body: await readBody(response),
      }
    } catch (error) {
      if (error instanceof ProviderUnavailable) throw error
      log?.warn({ provider: logged, ms: Date.now() - started, attempt, err: error }, 'provider call failed')
      const delay = attempt < retries ? retryDelayMs(attempt, null) : null
      if (delay === null)
        throw new ProviderUnreachable(`${method} ${url.origin}${url.pathname} failed: ${error}`, {
          cause: error,
        })
      await sleep(delay)
    }
  }
}
