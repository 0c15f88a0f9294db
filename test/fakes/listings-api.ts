import { randomUUID } from 'node:crypto'
import type { ServerResponse } from 'node:http'
import { type FakeServer, type RecordedRequest, sendJson, startFakeServer } from './http-server.js'

export interface FakeListingsAccount {
  id: string
  accountId: string
  accountName: string
  countryCode?: string
  parentAccountId?: string
  /** The real API answers with more fields than the spec lists. */
  [field: string]: unknown
}

export interface FakeListingsApi extends FakeServer {
  accounts: FakeListingsAccount[]
  /** The next `count` requests are answered 503, as an API that is restarting. */
  failNext(count: number): void
  /** The query of the `index`th recorded request (negative counts from the end). */
  queryOf(index: number): URLSearchParams
}

export const FAKE_LISTINGS_ACCOUNTS: FakeListingsAccount[] = [
  { id: 'acc-1', accountId: 'acc-1', accountName: 'Main Street Bakery', countryCode: 'US' },
  {
    id: 'acc-2',
    accountId: 'acc-2',
    accountName: 'Harbour Dental',
    countryCode: 'GB',
    parentAccountId: 'acc-1',
  },
  // No country, and a field outside the spec's list: both must reach the caller as they are.
  { id: 'acc-3', accountId: 'acc-3', accountName: 'Alpine Outfitters', locale: 'de_CH' },
]

// Error codes are the fake's own; the shape is the real API's error envelope.
const apiError = (code: number, message: string) => ({
  meta: { uuid: randomUUID(), errors: [{ code, type: 'FATAL_ERROR', message }] },
  response: {},
})

const nonNegativeInteger = (raw: string | null, fallback: number) =>
  raw !== null && /^\d+$/.test(raw) ? Number(raw) : fallback

/**
 * The external listings API on 127.0.0.1: `GET /v2/accounts` with the `api-key` header and the `v`
 * query parameter, paged by `limit` (default 10) and `offset`. Records every request it receives.
 */
export async function startFakeListingsApi(options: {
  apiKey: string
  accounts?: FakeListingsAccount[]
}): Promise<FakeListingsApi> {
  const accounts = options.accounts ?? FAKE_LISTINGS_ACCOUNTS
  let failures = 0

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    const url = new URL(request.url, 'http://fake')
    if (request.headers['api-key'] !== options.apiKey)
      return sendJson(response, 401, apiError(10, 'Invalid API key'))
    if (request.method !== 'GET' || url.pathname !== '/v2/accounts')
      return sendJson(response, 404, apiError(404, 'Not found'))
    if (!url.searchParams.get('v'))
      return sendJson(response, 400, apiError(2, 'Missing required parameter: v'))
    if (failures > 0) {
      failures--
      return sendJson(response, 503, apiError(5, 'Service unavailable'))
    }
    const offset = nonNegativeInteger(url.searchParams.get('offset'), 0)
    const limit = nonNegativeInteger(url.searchParams.get('limit'), 10)
    sendJson(response, 200, {
      meta: { uuid: randomUUID(), errors: [] },
      response: { count: accounts.length, accounts: accounts.slice(offset, offset + limit) },
    })
  }

  const server = await startFakeServer(respond)
  return {
    ...server,
    accounts,
    failNext: (count) => {
      failures = count
    },
    queryOf: (index) => {
      const request = server.requests.at(index)
      if (!request) throw new Error(`the fake listings API received no request #${index}`)
      return new URL(request.url, 'http://fake').searchParams
    },
  }
}
