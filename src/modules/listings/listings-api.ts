import type { Config } from '../../config.js'
import { Unavailable, UpstreamFailed } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import {
  type ProviderResponse,
  ProviderUnreachable,
  providerRequest,
} from '../../platform/providers/http-client.js'

export type ListingsApiSettings = Config['listings']

export interface ListingsApiError {
  code: number
  type: string
  message: string
}

/** The external API's answer to `GET /v2/accounts`. */
export interface ListingsAccountsResponse {
  meta: { uuid: string; errors: ListingsApiError[] }
  response: {
    count: number
    accounts: {
      id: string
      accountId: string
      accountName: string
      countryCode?: string
      parentAccountId?: string
    }[]
  }
}

export type ListingsQuery = Record<string, string | number | undefined>

export interface ListingsApi {
  /**
   * The API's JSON, unchanged (typed as the API documents it, not validated: it is passed through);
   * throws a domain error when the API does not answer with a success.
   */
  listAccounts(query: ListingsQuery): Promise<ListingsAccountsResponse>
}

// The version and the key come from configuration only: a caller may not pick another API version
// or substitute a key of their own through the query string.
const RESERVED_QUERY = new Set(['v', 'api_key', 'api-key'])

function callerQuery(query: ListingsQuery): ListingsQuery {
  return Object.fromEntries(Object.entries(query).filter(([name]) => !RESERVED_QUERY.has(name.toLowerCase())))
}

function apiErrors(body: unknown): Partial<ListingsApiError>[] {
  const errors = (body as { meta?: { errors?: unknown } } | null)?.meta?.errors
  return Array.isArray(errors) ? errors : []
}

/** The API's error answer as a 502, with its first message and all its errors for the caller. */
function upstreamError(status: number, body: unknown): UpstreamFailed {
  const errors = apiErrors(body)
  const message = errors.find((error) => typeof error.message === 'string')?.message
  return new UpstreamFailed(message ?? 'Listings API request failed', { status, errors })
}

async function requestAccounts(
  settings: ListingsApiSettings & { apiKey: string },
  query: ListingsQuery,
  log: Logger,
): Promise<ProviderResponse> {
  try {
    return await providerRequest(
      {
        provider: 'listings',
        url: `${settings.apiUrl}/v2/accounts`,
        query: { ...callerQuery(query), v: settings.version },
        headers: { 'api-key': settings.apiKey },
      },
      log,
    )
  } catch (error) {
    if (error instanceof ProviderUnreachable) throw new UpstreamFailed('Listings API unreachable')
    throw error
  }
}

/** The client of the external listings API; `log` is the request's logger, so calls carry its id. */
export function createListingsApi(settings: ListingsApiSettings, log: Logger): ListingsApi {
  return {
    async listAccounts(query) {
      const { apiKey } = settings
      // Never call the API without a key: the answer would only be its 401.
      if (!apiKey) throw new Unavailable('Listings API is not configured: set LISTINGS_API_KEY')
      const response = await requestAccounts({ ...settings, apiKey }, query, log)
      if (response.status < 200 || response.status >= 300) throw upstreamError(response.status, response.body)
      return response.body as ListingsAccountsResponse
    },
  }
}
