import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import { isJsonObject, type JsonFields } from '../../platform/http/json-fields.js'
import type { Logger } from '../../platform/log/logger.js'
import { providerRequest } from '../../platform/providers/http-client.js'

/** SQUARE_WEBHOOK_SIGNATURE_KEY, SQUARE_WEBHOOK_URL, SQUARE_ACCESS_TOKEN, SQUARE_BASE_URL (config.reviews.square). */
export interface SquareSettings {
  webhookSignatureKey?: string
  webhookUrl: string
  accessToken?: string
  baseUrl: string
}

/** The API version our reads are written against; Square answers in the shape of the version sent. */
export const SQUARE_VERSION = '2024-12-18'

/** Square's Money: `amount` in the smallest unit of `currency`. */
export interface SquareMoney {
  amount?: number
  currency?: string
}

/** Who an order is for when it names no customer: a fulfillment's recipient. */
export interface SquareRecipient {
  display_name?: string
  email_address?: string
  phone_number?: string
}

/** The fields of Square's Order this service reads. */
export interface SquareOrder {
  id?: string
  location_id?: string
  customer_id?: string
  state?: string
  total_money?: SquareMoney
  tenders?: { customer_id?: string }[]
  fulfillments?: {
    pickup_details?: { recipient?: SquareRecipient }
    shipment_details?: { recipient?: SquareRecipient }
    delivery_details?: { recipient?: SquareRecipient }
  }[]
}

/** The fields of Square's Customer this service reads. */
export interface SquareCustomer {
  id?: string
  given_name?: string
  family_name?: string
  email_address?: string
  phone_number?: string
}

/** Square's refusal: its HTTP status and the first error's `code` (`UNAUTHORIZED`, `NOT_FOUND`, …). */
export class SquareError extends Error {
  constructor(
    readonly status: number,
    readonly code: string | undefined,
  ) {
    super(`Square answered ${status}${code ? ` ${code}` : ''}`)
    this.name = 'SquareError'
  }

  /** Worth retrying later: Square failed or throttled, rather than refused this request. */
  get transient(): boolean {
    return this.status >= 500 || this.status === 429
  }
}

/**
 * Square's webhook signature: base64 HMAC-SHA256 with the subscription's signature key over the
 * notification URL, exactly as registered, followed by the raw body. Compared in constant time.
 */
export function isSquareSignature(
  signatureKey: string,
  notificationUrl: string,
  rawBody: Buffer,
  signature: string,
): boolean {
  const expected = createHmac('sha256', signatureKey).update(notificationUrl).update(rawBody).digest('base64')
  return isSameSecret(signature, expected)
}

/**
 * `GET {SQUARE_BASE_URL}{path}` with the access token, read as `{ [field]: ... }`; null on 404. A job holds
 * its event's transaction open meanwhile, so attempts are short and few: the job itself retries later.
 */
async function squareRead(
  settings: SquareSettings,
  path: string,
  field: 'order' | 'customer',
  log: Logger,
): Promise<JsonFields | null> {
  const response = await providerRequest(
    {
      provider: 'square',
      url: `${settings.baseUrl}${path}`,
      headers: {
        authorization: `Bearer ${settings.accessToken ?? ''}`,
        'square-version': SQUARE_VERSION,
      },
      timeoutMs: 5_000,
      retries: 1,
    },
    log,
  )
  const body = isJsonObject(response.body) ? response.body : {}
  if (response.status === 404) return null
  const found = body[field]
  if (response.status >= 300 || !isJsonObject(found)) {
    const [first] = Array.isArray(body.errors) ? body.errors : []
    throw new SquareError(response.status, isJsonObject(first) ? String(first.code) : undefined)
  }
  return found
}

/** Square's Orders API `RetrieveOrder`; null when Square knows no such order. */
export async function fetchSquareOrder(
  settings: SquareSettings,
  orderId: string,
  log: Logger,
): Promise<SquareOrder | null> {
  return squareRead(settings, `/v2/orders/${encodeURIComponent(orderId)}`, 'order', log)
}

/** Square's Customers API `RetrieveCustomer`; null when Square knows no such customer (deleted). */
export async function fetchSquareCustomer(
  settings: SquareSettings,
  customerId: string,
  log: Logger,
): Promise<SquareCustomer | null> {
  return squareRead(settings, `/v2/customers/${encodeURIComponent(customerId)}`, 'customer', log)
}
