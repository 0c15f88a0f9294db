import type { ServerResponse } from 'node:http'
import { type FakeServer, type RecordedRequest, sendJson, startFakeServer } from './http-server.js'

export interface FakeSquareApi extends FakeServer {
  /** Orders by id, as `GET /v2/orders/{id}` answers them. */
  orders: Map<string, Record<string, unknown>>
  /** Customers by id, as `GET /v2/customers/{id}` answers them. */
  customers: Map<string, Record<string, unknown>>
  /** The next `count` requests are answered with `error`: by default a 503, as Square answers in an outage. */
  failNext(count: number, error?: SquareFailure): void
}

export interface SquareFailure {
  status: number
  category: string
  code: string
}
const OUTAGE: SquareFailure = { status: 503, category: 'API_ERROR', code: 'SERVICE_UNAVAILABLE' }

// Square's error envelope, with its categories and codes.
const squareErrors = (status: number, category: string, code: string, detail: string) => ({
  status,
  body: { errors: [{ category, code, detail }] },
})

/** Square's API versions are dates; a malformed one is refused, as Square does. */
const SQUARE_VERSION = /^\d{4}-\d{2}-\d{2}$/

/**
 * The refusal Square would give, or none. The real API falls back to the application's pinned version when
 * `Square-Version` is missing; this fake insists on it, so the service is proven to pin its own.
 */
function refusal(request: RecordedRequest, accessToken: string) {
  if (request.headers.authorization !== `Bearer ${accessToken}`)
    return squareErrors(401, 'AUTHENTICATION_ERROR', 'UNAUTHORIZED', 'This request could not be authorized.')
  const version = request.headers['square-version']
  if (typeof version !== 'string' || !SQUARE_VERSION.test(version))
    return squareErrors(400, 'INVALID_REQUEST_ERROR', 'INVALID_SQUARE_VERSION_FORMAT', 'Square-Version')
  if (request.method !== 'GET')
    return squareErrors(
      405,
      'INVALID_REQUEST_ERROR',
      'METHOD_NOT_ALLOWED',
      `${request.method} is not allowed`,
    )
  return undefined
}

/**
 * Square's Orders and Customers APIs on 127.0.0.1: `GET /v2/orders/{id}` answering `{ order }` and
 * `GET /v2/customers/{id}` answering `{ customer }`, with the bearer access token and a `Square-Version`
 * header; 404 with Square's `NOT_FOUND` error for what it does not hold. Records every request.
 */
export async function startFakeSquareApi(options: { accessToken: string }): Promise<FakeSquareApi> {
  const orders = new Map<string, Record<string, unknown>>()
  const customers = new Map<string, Record<string, unknown>>()
  let failures = 0
  let failure = OUTAGE

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    const refused = refusal(request, options.accessToken)
    if (refused) return sendJson(response, refused.status, refused.body)
    if (failures > 0) {
      failures--
      const failed = squareErrors(failure.status, failure.category, failure.code, 'Failed as told')
      return sendJson(response, failed.status, failed.body)
    }
    const match = /^\/v2\/(orders|customers)\/([^/]+)$/.exec(new URL(request.url, 'http://fake').pathname)
    const id = decodeURIComponent(match?.[2] ?? '')
    if (match?.[1] === 'orders' && orders.has(id)) return sendJson(response, 200, { order: orders.get(id) })
    if (match?.[1] === 'customers' && customers.has(id))
      return sendJson(response, 200, { customer: customers.get(id) })
    const missing = squareErrors(404, 'INVALID_REQUEST_ERROR', 'NOT_FOUND', `Could not find ${id}`)
    sendJson(response, missing.status, missing.body)
  }

  const server = await startFakeServer(respond)
  return {
    ...server,
    orders,
    customers,
    failNext: (count, error = OUTAGE) => {
      failures = count
      failure = error
    },
  }
}
