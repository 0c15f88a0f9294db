import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { replaceUnstorable } from '../../platform/db/storable.js'
import { Invalid } from '../../platform/http/errors.js'
import { isJsonObject, type JsonFields, textOf } from '../../platform/http/json-fields.js'
import { configurationInForce } from './configuration.service.js'
import { ORDER_TRIGGER, type TriggerType } from './documents.schemas.js'
import { cancelScheduledOfSources, recordRefunds } from './requests.repository.js'
import {
  type EventOutcome,
  type ScheduleDeps,
  SKIP_REASONS,
  scheduleReviewRequests,
  skipped,
} from './scheduling.service.js'
import type { WebhookEventRow } from './webhook-events.repository.js'
import { PROVIDER_ID_MAX_LENGTH } from './webhook-events.schemas.js'
import { accountOfEvent, keptEventId, type WebhookPost } from './webhook-events.service.js'

/** The spec: "invalid signature gives 400". */
export const INVALID_SIGNATURE = 'Invalid signature'
/** Stripe's own default: a signature older than 5 minutes is refused (replays). */
export const STRIPE_SIGNATURE_TOLERANCE_SECONDS = 300

/** The events that announce a succeeded payment, and those that announce its refund. */
export const PAYMENT_EVENTS = ['charge.succeeded', 'payment_intent.succeeded'] as const
export const REFUND_EVENTS = ['charge.refunded', 'refund.created'] as const
/** The type given to the spec's bare charge object, posted without a Stripe event around it. */
export const BARE_CHARGE = 'charge'

const isPayment = (type: string) =>
  type === BARE_CHARGE || (PAYMENT_EVENTS as readonly string[]).includes(type)
const isRefund = (type: string) => (REFUND_EVENTS as readonly string[]).includes(type)

/** The trigger a kind of payment event reports: a payment, ORDER_TRIGGER; a refund or another kind, none. */
const paymentTrigger = (type: string): TriggerType | null => (isPayment(type) ? ORDER_TRIGGER : null)

/**
 * What Stripe posted, from the exact bytes it sent: `Stripe-Signature` verified with STRIPE_WEBHOOK_SECRET
 * (`constructEvent`, 300 s tolerance) before anything is read; 400 without a valid one.
 */
export async function readStripePost(
  secret: string | undefined,
  signature: string | undefined,
  rawBody: Buffer,
): Promise<unknown> {
  if (!secret || !signature) throw new Invalid(INVALID_SIGNATURE)
  // Loaded on the first post: the package is large, and a server without Stripe never needs it.
  const { default: Stripe } = await import('stripe')
  try {
    return replaceUnstorable(
      Stripe.webhooks.constructEvent(rawBody, signature, secret, STRIPE_SIGNATURE_TOLERANCE_SECONDS),
    )
  } catch {
    throw new Invalid(INVALID_SIGNATURE)
  }
}

/** A verified post as an event to store: a Stripe event, or the spec's bare charge (its id as event id). */
export function stripeWebhookPost(body: unknown): WebhookPost {
  if (
    isJsonObject(body) &&
    body.object === 'event' &&
    isJsonObject(body.data) &&
    isJsonObject(body.data.object)
  ) {
    const { id, type } = body
    const payload = body.data.object
    if (typeof id === 'string' && typeof type === 'string')
      return {
        eventId: keptEventId('id', id),
        type,
        trigger: paymentTrigger(type),
        payload,
        accountId: paymentAccountId(payload),
      }
  }
  if (isJsonObject(body) && typeof body.id === 'string' && typeof body.status === 'string')
    return {
      eventId: keptEventId('id', body.id),
      type: BARE_CHARGE,
      trigger: paymentTrigger(BARE_CHARGE),
      payload: body,
      accountId: paymentAccountId(body),
    }
  throw new Invalid('body must be a Stripe event or a charge object')
}

/**
 * The account a payment names (`metadata.account_id`), stored with its event when it is an id: anything else
 * names no account (applying the event says so) and is no key for the events' index by account.
 */
function paymentAccountId(payload: unknown): string | undefined {
  const named =
    isJsonObject(payload) && isJsonObject(payload.metadata) ? textOf(payload.metadata.account_id) : undefined
  return named !== undefined && isId(named) ? named : undefined
}

export interface Payment {
  accountId: string | undefined
  succeeded: boolean
  /** The payment intent when there is one, else the charge: two events of one payment name the same. */
  sourceRef: string
  amount: number | undefined
  currency: string | undefined
  customer: { name: string; email?: string; phone?: string }
}

/** A charge's or payment intent's facts: the customer from `metadata`, else its billing details. */
export function paymentOf(type: string, object: JsonFields): Payment {
  const metadata = isJsonObject(object.metadata) ? object.metadata : {}
  const billing = isJsonObject(object.billing_details) ? object.billing_details : {}
  const shipping = isJsonObject(object.shipping) ? object.shipping : {}
  const isIntent = type.startsWith('payment_intent.')
  const amount = isIntent ? (object.amount_received ?? object.amount) : object.amount
  const email = textOf(metadata.customer_email) ?? textOf(billing.email) ?? textOf(object.receipt_email)
  const phone = textOf(metadata.customer_phone) ?? textOf(billing.phone) ?? textOf(shipping.phone)
  return {
    accountId: textOf(metadata.account_id),
    succeeded: object.status === 'succeeded',
    sourceRef: (isIntent ? textOf(object.id) : (textOf(object.payment_intent) ?? textOf(object.id))) ?? '',
    amount: Number.isSafeInteger(amount) ? (amount as number) : undefined,
    currency: textOf(object.currency),
    customer: {
      name: textOf(metadata.customer_name) ?? textOf(billing.name) ?? textOf(shipping.name) ?? '',
      ...(email && { email }),
      ...(phone && { phone }),
    },
  }
}

/** The payments a refund event names: its charge and its payment intent. */
export function refundedSources(type: string, object: JsonFields): string[] {
  const refs =
    type === 'refund.created' ? [object.charge, object.payment_intent] : [object.id, object.payment_intent]
  return refs.map(textOf).filter((ref): ref is string => ref !== undefined)
}

/**
 * A refund, kept whatever the configuration says (`exclude_refunded` is read again when a request is due);
 * the scheduled requests of its payment are cancelled when the configuration excludes refunds.
 */
async function cancelRefundedRequests(
  tx: Database,
  refund: { accountId: string; parentAccount: string | null; sourceRefs: string[] },
): Promise<EventOutcome> {
  // A ref longer than the reviews keep names no payment they scheduled for, and is no key to keep.
  const sourceRefs = refund.sourceRefs.filter((ref) => ref.length <= PROVIDER_ID_MAX_LENGTH)
  await recordRefunds(tx, refund.accountId, sourceRefs)
  const config = await configurationInForce(tx, {
    account_id: refund.accountId,
    parent_account: refund.parentAccount,
  })
  if (!config?.conditions?.exclude_refunded)
    return skipped({
      reason: 'refunds_not_excluded',
      reasonText:
        'A refund, kept: the configuration does not exclude refunded orders, so no request was cancelled',
    })
  const cancelled = await cancelScheduledOfSources(tx, refund.accountId, sourceRefs, SKIP_REASONS.refunded)
  return cancelled > 0
    ? { status: 'processed', reason: null, reasonText: null, customerKey: null }
    : skipped({
        reason: 'nothing_scheduled',
        reasonText: 'A refund: no request of this payment was waiting to be cancelled',
      })
}

/**
 * A stored payment event, applied: a succeeded payment schedules review requests (`order_completed`), a
 * refund cancels them when the configuration excludes refunds; anything else is skipped.
 */
export async function applyPaymentEvent(
  deps: ScheduleDeps,
  tx: Database,
  event: WebhookEventRow,
): Promise<EventOutcome> {
  const object = isJsonObject(event.payload) ? event.payload : {}
  const refund = isRefund(event.type)
  if (!refund && !isPayment(event.type))
    return skipped({
      reason: 'unsupported_event',
      reasonText: `A ${event.type} event schedules nothing: only succeeded payments (${[BARE_CHARGE, ...PAYMENT_EVENTS].join(', ')}) and refunds (${REFUND_EVENTS.join(', ')}) count`,
    })
  const payment = paymentOf(event.type, object)
  if (!refund && !payment.succeeded)
    return skipped({
      reason: 'not_succeeded',
      reasonText: `The payment's status is ${textOf(object.status) ?? 'unknown'}, not succeeded`,
    })
  const account = await accountOfEvent(tx, payment.accountId)
  if ('failure' in account) return account.failure
  if (refund)
    return cancelRefundedRequests(tx, { ...account, sourceRefs: refundedSources(event.type, object) })
  return scheduleReviewRequests(deps, tx, {
    eventId: event.id,
    receivedAt: event.createdAt,
    ...account,
    trigger: ORDER_TRIGGER,
    sourceRef: payment.sourceRef,
    customer: payment.customer,
    orderValue: payment.amount,
    currency: payment.currency,
  })
}
