import type { Database } from '../../platform/db/connection.js'
import { replaceUnstorable } from '../../platform/db/storable.js'
import { Invalid } from '../../platform/http/errors.js'
import { isJsonObject, textOf } from '../../platform/http/json-fields.js'
import type { Logger } from '../../platform/log/logger.js'
import { ORDER_TRIGGER } from './documents.schemas.js'
import { locationOwner } from './order-locations.service.js'
import { INVALID_SIGNATURE } from './payment-webhook.service.js'
import {
  type EventOutcome,
  failed,
  type ReviewOccasion,
  type ScheduleDeps,
  scheduleReviewRequests,
  skipped,
} from './scheduling.service.js'
import {
  fetchSquareCustomer,
  fetchSquareOrder,
  isSquareSignature,
  type SquareCustomer,
  SquareError,
  type SquareOrder,
  type SquareRecipient,
  type SquareSettings,
} from './square.js'
import type { WebhookEventRow } from './webhook-events.repository.js'
import { accountOfEvent, keptEventId, receiveWebhookPost } from './webhook-events.service.js'

/** The events that may announce a completed order: Square sends several for one order. */
export const ORDER_EVENTS = ['order.created', 'order.updated'] as const
const isOrderEvent = (type: string) => (ORDER_EVENTS as readonly string[]).includes(type)

/** The one state of a Square order that was paid for and handed over. */
export const COMPLETED = 'COMPLETED'

/** Why an order event schedules nothing, besides the reasons of scheduling itself. */
export const ORDER_EVENT_REASONS = {
  unsupportedEvent: 'unsupported_event',
  unclaimedLocation: 'unclaimed_location',
  orderNotFound: 'order_not_found',
  notCompleted: 'not_completed',
  missingOrderId: 'missing_order_id',
  /** No SQUARE_ACCESS_TOKEN to read the order with, and the event carries none. */
  noAccessToken: 'square_access_token_unset',
} as const

/** Square's header, and the spec's name for the same value. */
const SIGNATURE_HEADERS = ['x-square-hmacsha256-signature', 'x-orderprovider-signature'] as const

/** The signature a post carries, under either header name. */
export function signatureOf(headers: Record<string, string | string[] | undefined>): string | undefined {
  for (const name of SIGNATURE_HEADERS) {
    const value = headers[name]
    if (typeof value === 'string') return value
  }
  return undefined
}

/**
 * What Square posted, from the exact bytes it sent: the signature checked against SQUARE_WEBHOOK_SIGNATURE_KEY
 * and SQUARE_WEBHOOK_URL before anything is read; 400 without a valid one, or with no key set.
 */
export function readSquarePost(
  settings: Pick<SquareSettings, 'webhookSignatureKey' | 'webhookUrl'>,
  signature: string | undefined,
  rawBody: Buffer,
): unknown {
  const key = settings.webhookSignatureKey
  if (!key || !signature || !isSquareSignature(key, settings.webhookUrl, rawBody, signature))
    throw new Invalid(INVALID_SIGNATURE)
  try {
    return replaceUnstorable(JSON.parse(rawBody.toString('utf8')))
  } catch {
    throw new Invalid('body must be a JSON Square event')
  }
}

/** The order an event names: the spec's `data.object.order`, or Square's `order_created` / `order_updated`. */
export function announcedOrder(event: unknown): {
  orderId: string | undefined
  locationId: string | undefined
  /** The order itself, when the event carries it (the spec's shape). */
  carried: SquareOrder | undefined
} {
  const data = isJsonObject(event) && isJsonObject(event.data) ? event.data : {}
  const object = isJsonObject(data.object) ? data.object : {}
  const order = isJsonObject(object.order) ? object.order : undefined
  const announced = [object.order_created, object.order_updated].find(isJsonObject) ?? {}
  return {
    orderId: textOf(order?.id) ?? textOf(announced.order_id) ?? textOf(data.id),
    locationId: textOf(order?.location_id) ?? textOf(announced.location_id),
    carried: order,
  }
}

/**
 * Stores a verified Square event with the account claiming its location (none when unclaimed: the event is
 * kept all the same) and queues its processing; a repeated `event_id` is stored once.
 */
export async function receiveSquarePost(
  deps: { db: Database; log: Logger },
  body: unknown,
  queueProcessing: (eventRowId: string, accountId: string | undefined) => void,
): Promise<void> {
  const fields = isJsonObject(body) ? body : {}
  const eventId = textOf(fields.event_id)
  const type = textOf(fields.type)
  if (!eventId) throw new Invalid('event_id is required')
  if (!type) throw new Invalid('type is required')
  const { locationId } = announcedOrder(body)
  const accountId = locationId ? await locationOwner(deps.db, locationId) : undefined
  const trigger = isOrderEvent(type) ? ORDER_TRIGGER : null
  await receiveWebhookPost(
    deps,
    'orderprovider',
    { eventId: keptEventId('event_id', eventId), type, trigger, payload: body, accountId },
    queueProcessing,
  )
}

export interface OrderEventDeps extends ScheduleDeps {
  square: SquareSettings
}

/** The order's customer: the order's own, else the one a tender names. */
function customerIdOf(order: SquareOrder): string | undefined {
  const tenders = Array.isArray(order.tenders) ? order.tenders : []
  return textOf(order.customer_id) ?? tenders.map((tender) => textOf(tender?.customer_id)).find(Boolean)
}

/** Who a fulfillment is handed to: the contact of an order placed without a customer record. */
function recipientOf(order: SquareOrder): SquareRecipient {
  const fulfillments = Array.isArray(order.fulfillments) ? order.fulfillments : []
  const recipients = fulfillments.map(
    (f) => f?.pickup_details?.recipient ?? f?.shipment_details?.recipient ?? f?.delivery_details?.recipient,
  )
  return recipients.find(isJsonObject) ?? {}
}

function contactOf(order: SquareOrder, customer: SquareCustomer | null): ReviewOccasion['customer'] {
  const recipient = recipientOf(order)
  const fullName = [customer?.given_name, customer?.family_name].map(textOf).filter(Boolean).join(' ')
  const email = textOf(customer?.email_address) ?? textOf(recipient.email_address)
  const phone = textOf(customer?.phone_number) ?? textOf(recipient.phone_number)
  return {
    name: fullName || textOf(recipient.display_name) || '',
    ...(email && { email }),
    ...(phone && { phone }),
  }
}

/**
 * The completed order and its customer, as Square has them now (`GET /v2/orders/{id}`, then
 * `GET /v2/customers/{id}`): Square's events carry no totals and no customer. Without SQUARE_ACCESS_TOKEN,
 * the order the event carries, and no customer. Square refusing the read (401, 403) fails the event for the
 * operator to see; Square down or unreachable throws, so the job retries.
 */
async function completedOrder(
  deps: OrderEventDeps,
  orderId: string,
  carried: SquareOrder | undefined,
): Promise<{ order: SquareOrder; customer: SquareCustomer | null } | { failure: EventOutcome }> {
  const { square, log } = deps
  try {
    const order = square.accessToken ? await fetchSquareOrder(square, orderId, log) : carried
    if (!order)
      return square.accessToken
        ? {
            failure: skipped({
              reason: ORDER_EVENT_REASONS.orderNotFound,
              reasonText: `Square does not know the order ${orderId}`,
            }),
          }
        : {
            failure: failed({
              reason: ORDER_EVENT_REASONS.noAccessToken,
              reasonText:
                'The event does not carry the order, and the server has no SQUARE_ACCESS_TOKEN to read it with',
            }),
          }
    if (order.state !== COMPLETED)
      return {
        failure: skipped({
          reason: ORDER_EVENT_REASONS.notCompleted,
          reasonText: `The order's state is ${textOf(order.state) ?? 'unknown'}, not ${COMPLETED}`,
        }),
      }
    const customerId = square.accessToken ? customerIdOf(order) : undefined
    return { order, customer: customerId ? await fetchSquareCustomer(square, customerId, log) : null }
  } catch (error) {
    if (!(error instanceof SquareError) || error.transient) throw error
    const code = error.code ?? String(error.status)
    return {
      failure: failed({
        reason: `square_${code.toLowerCase()}`,
        reasonText: `Square refused to give the order (${error.status} ${code})`,
      }),
    }
  }
}

/** A completed order of the location's owner: review requests for its customer. */
async function applyOwnedOrder(
  deps: OrderEventDeps,
  tx: Database,
  event: WebhookEventRow,
  order: { owner: string; id: string; carried: SquareOrder | undefined },
): Promise<EventOutcome> {
  const account = await accountOfEvent(tx, order.owner)
  if ('failure' in account) return account.failure
  const found = await completedOrder(deps, order.id, order.carried)
  if ('failure' in found) return found.failure
  const money = found.order.total_money
  return scheduleReviewRequests(deps, tx, {
    eventId: event.id,
    receivedAt: event.createdAt,
    ...account,
    trigger: ORDER_TRIGGER,
    sourceRef: order.id,
    customer: contactOf(found.order, found.customer),
    orderValue: Number.isSafeInteger(money?.amount) ? money?.amount : undefined,
    currency: textOf(money?.currency),
  })
}

/**
 * A stored Square event, applied: an order of a claimed location, once COMPLETED, schedules review requests
 * (ORDER_TRIGGER) for its customer. Requests are keyed by the order, so the several events Square sends for
 * one order schedule once. The event is the account's that claims the location when it is applied.
 */
export async function applyOrderEvent(
  deps: OrderEventDeps,
  tx: Database,
  event: WebhookEventRow,
): Promise<EventOutcome> {
  if (!isOrderEvent(event.type))
    return skipped({
      reason: ORDER_EVENT_REASONS.unsupportedEvent,
      reasonText: `A ${event.type} event schedules nothing: only ${ORDER_EVENTS.join(' and ')} count`,
    })
  const { orderId, locationId, carried } = announcedOrder(event.payload)
  if (!orderId)
    return failed({ reason: ORDER_EVENT_REASONS.missingOrderId, reasonText: 'The event names no order' })
  // Read now, not at receipt: the location may have been claimed or given up since.
  const owner = locationId ? await locationOwner(tx, locationId) : undefined
  if (!owner)
    return skipped({
      reason: ORDER_EVENT_REASONS.unclaimedLocation,
      reasonText: `No account claims the order's Square location ${locationId ?? '(none named)'}: claim it at /reviews/orderprovider/locations`,
    })
  const outcome = await applyOwnedOrder(deps, tx, event, { owner, id: orderId, carried })
  return { ...outcome, accountId: owner }
}
