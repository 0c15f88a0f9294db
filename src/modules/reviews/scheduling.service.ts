import { randomBytes } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import type { Logger } from '../../platform/log/logger.js'
import { DAY_MS, HOUR_MS } from '../../platform/time.js'
import type { ConfigurationRow } from './configuration.repository.js'
import { configurationInForce } from './configuration.service.js'
import type { TriggerType } from './documents.schemas.js'
import {
  hasCountedRequest,
  insertRequest,
  lockCustomerPlatform,
  type RequestKey,
  wasRefunded,
} from './requests.repository.js'
import { PHONE_MAX_LENGTH } from './sms-opt-outs.schemas.js'
import { countEarlierOrders } from './webhook-events.repository.js'
import { PROVIDER_ID_MAX_LENGTH } from './webhook-events.schemas.js'

/** The spec's limit: one request per customer per platform per 30 days. */
const REVIEW_REQUEST_WINDOW_DAYS = 30

/** Where the spec's 30 days ending at `now` start: a request created since holds the customer's place. */
export const requestLimitStart = (now: Date) => new Date(now.getTime() - REVIEW_REQUEST_WINDOW_DAYS * DAY_MS)

/** Customer segments, from the account's order history (docs/decisions.md). */
const VIP_MIN_EARLIER_ORDERS = 3
const VIP_HISTORY_DAYS = 365

/** Why an event schedules nothing, or a request is not sent: the spec's skip reasons and ours. */
export const SKIP_REASONS = {
  noConfiguration: 'no_configuration',
  disabled: 'disabled',
  triggerMismatch: 'trigger_mismatch',
  missingContact: 'missing_customer_contact',
  belowMinOrderValue: 'below_min_order_value',
  notInSegment: 'customer_segment',
  refunded: 'refunded',
  repeatedCustomer: 'exclude_repeated',
  repeatedEvent: 'repeated_event',
  frequencyLimit: 'frequency_limit',
  noReviewLink: 'no_review_link',
  optedOut: 'opted_out',
} as const

/** A payment or order whose id is longer than the reviews keep (PROVIDER_ID_MAX_LENGTH): no provider's is. */
export const SOURCE_REF_TOO_LONG = 'source_ref_too_long'

/** What a payment, an order or an account's own event brings to schedule review requests. */
export interface ReviewOccasion {
  /** The stored webhook event it came from. */
  eventId: string
  receivedAt: Date
  accountId: string
  parentAccount: string | null
  trigger: TriggerType
  /** The payment or order: scheduled once per platform, and cancelled by its refund. */
  sourceRef: string
  customer: { name: string; email?: string; phone?: string }
  /** Minor units of `currency`. */
  orderValue?: number
  currency?: string
}

/** Why an event scheduled nothing: the code a program reads, and the sentence the account reads. */
export interface Because {
  reason: string
  reasonText: string
}

/** What became of an event: `processed` when it scheduled at least one request (then no reason). */
export type EventOutcome = (
  | { status: 'processed'; reason: null; reasonText: null }
  | ({ status: 'skipped' | 'failed' } & Because)
) & {
  customerKey: string | null
  /** The account the event was applied for, when it became known only then (an order's location owner). */
  accountId?: string
}

export interface ScheduleDeps {
  log: Logger
  /** Queues the sending of a request at its time, with the caller's transaction. */
  enqueueSend: (tx: Database, request: RequestKey, startAfter: Date) => Promise<unknown>
}

export const skipped = (because: Because, customerKey: string | null = null): EventOutcome => ({
  status: 'skipped',
  ...because,
  customerKey,
})
export const failed = (because: Because): EventOutcome => ({
  status: 'failed',
  ...because,
  customerKey: null,
})

/** The customer's identity across events: the lower-cased email, else the phone with digits only. */
export function customerKeyOf(customer: { email?: string; phone?: string }): string | null {
  const email = customer.email?.trim().toLowerCase()
  if (email) return email
  const digits = customer.phone?.replace(/[^\d+]/g, '')
  return digits ? digits : null
}

/**
 * The customer without an email longer than SMTP carries or a phone longer than any number: neither reaches
 * them, and neither fits the indexes on the customer (the event is then skipped for want of a contact).
 */
function reachableCustomer({
  email,
  phone,
  ...customer
}: ReviewOccasion['customer']): ReviewOccasion['customer'] {
  return {
    ...customer,
    ...(email && email.trim().length <= EMAIL_MAX_LENGTH && { email }),
    ...(phone && phone.length <= PHONE_MAX_LENGTH && { phone }),
  }
}

/** The channels the configuration sends by, given what the customer can be reached at. */
function reachable(config: ConfigurationRow, customer: ReviewOccasion['customer']): boolean {
  if (config.sendMethod === 'email') return Boolean(customer.email)
  if (config.sendMethod === 'sms') return Boolean(customer.phone)
  return Boolean(customer.email || customer.phone)
}

const NO_CONTACT_TEXTS: Record<ConfigurationRow['sendMethod'], string> = {
  email: 'The customer has no usable email address, and the configuration sends by email (send_method email)',
  sms: 'The customer has no usable phone number, and the configuration sends by SMS (send_method sms)',
  both: 'The customer has neither a usable email address nor a phone number',
}

function belowMinOrderValue(occasion: ReviewOccasion, min: number): Because {
  const currency = occasion.currency ? ` ${occasion.currency.toUpperCase()}` : ''
  return {
    reason: SKIP_REASONS.belowMinOrderValue,
    reasonText:
      occasion.orderValue === undefined
        ? `The event has no order value, and the configuration's min_order_value is ${min}`
        : `The order value ${occasion.orderValue}${currency} is below the configuration's min_order_value ${min} (both in minor units)`,
  }
}

/** Whether the customer is in the configuration's segment, from the account's order history; why not. */
async function outsideSegment(
  tx: Database,
  segment: 'vip' | 'new',
  occasion: ReviewOccasion,
  customerKey: string,
): Promise<Because | null> {
  const event = { id: occasion.eventId, customerKey, before: occasion.receivedAt }
  const since =
    segment === 'new' ? new Date(0) : new Date(occasion.receivedAt.getTime() - VIP_HISTORY_DAYS * DAY_MS)
  const history = await countEarlierOrders(tx, occasion.accountId, event, since)
  if (segment === 'new' ? history === 0 : history >= VIP_MIN_EARLIER_ORDERS) return null
  return {
    reason: SKIP_REASONS.notInSegment,
    reasonText:
      segment === 'new'
        ? "The customer ordered from this account before, and the configuration's customer_segment is new"
        : `The customer has ${history} earlier orders in the last ${VIP_HISTORY_DAYS} days; the configuration's customer_segment vip needs ${VIP_MIN_EARLIER_ORDERS}`,
  }
}

/** The configuration's conditions, in the order written; why the first not met is not. */
async function unmetCondition(
  tx: Database,
  config: ConfigurationRow,
  occasion: ReviewOccasion,
  customerKey: string,
): Promise<Because | null> {
  const conditions = config.conditions ?? {}
  if (conditions.min_order_value !== undefined && (occasion.orderValue ?? 0) < conditions.min_order_value)
    return belowMinOrderValue(occasion, conditions.min_order_value)
  // A refund may arrive before its payment: Stripe does not promise the order of events.
  if (conditions.exclude_refunded && (await wasRefunded(tx, occasion.accountId, occasion.sourceRef)))
    return {
      reason: SKIP_REASONS.refunded,
      reasonText:
        'The payment was refunded, and the configuration excludes refunded orders (exclude_refunded)',
    }
  const segment = conditions.customer_segment ?? 'all'
  if (segment !== 'all') {
    const outside = await outsideSegment(tx, segment, occasion, customerKey)
    if (outside) return outside
  }
  if (
    conditions.exclude_repeated &&
    (await hasCountedRequest(tx, parentOf(occasion), { customerKey }, requestLimitStart(occasion.receivedAt)))
  )
    return {
      reason: SKIP_REASONS.repeatedCustomer,
      reasonText: `The customer was asked for a review in the last ${REVIEW_REQUEST_WINDOW_DAYS} days, and the configuration excludes repeated customers (exclude_repeated)`,
    }
  return null
}

const NO_CONFIGURATION: Because = {
  reason: SKIP_REASONS.noConfiguration,
  reasonText:
    'No auto review request configuration applies to this account: set one with PUT /reviews/auto-review-request',
}

/** Why the configuration does not take the occasion at all, before its customer is looked at. */
function refusal(config: ConfigurationRow, occasion: ReviewOccasion): Because | null {
  if (!config.enabled)
    return {
      reason: SKIP_REASONS.disabled,
      reasonText: 'The auto review request configuration is disabled (enabled: false)',
    }
  if (config.trigger !== occasion.trigger)
    return {
      reason: SKIP_REASONS.triggerMismatch,
      reasonText: `The configuration's trigger is ${config.trigger}; this event is ${occasion.trigger}`,
    }
  return null
}

const parentOf = (occasion: Pick<ReviewOccasion, 'accountId' | 'parentAccount'>) =>
  occasion.parentAccount ?? occasion.accountId
const newCode = () => randomBytes(9).toString('base64url')

/**
 * One request per platform of the configuration, each sent by a job (`startAfter`), unless the customer holds
 * the platform's place in the 30-day limit (then kept `skipped`); how many were scheduled, and how many the
 * payment or order had scheduled already.
 */
async function schedulePerPlatform(
  deps: ScheduleDeps,
  tx: Database,
  occasion: ReviewOccasion,
  config: ConfigurationRow,
  customer: { key: string } & ReviewOccasion['customer'],
): Promise<{ scheduled: number; repeated: number }> {
  const parentAccount = parentOf(occasion)
  const scheduledFor = new Date(occasion.receivedAt.getTime() + config.delayHours * HOUR_MS)
  let scheduled = 0
  let repeated = 0
  for (const platform of config.platforms) {
    await lockCustomerPlatform(tx, parentAccount, { customerKey: customer.key, platform })
    const limited = await hasCountedRequest(
      tx,
      parentAccount,
      { customerKey: customer.key, platform },
      requestLimitStart(occasion.receivedAt),
    )
    const row = await insertRequest(tx, occasion.accountId, {
      parentAccount,
      eventId: occasion.eventId,
      sourceRef: occasion.sourceRef,
      customerKey: customer.key,
      customerName: customer.name,
      customerEmail: customer.email ?? null,
      customerPhone: customer.phone ?? null,
      platform,
      sendMethod: config.sendMethod,
      status: limited ? 'skipped' : 'scheduled',
      reason: limited ? SKIP_REASONS.frequencyLimit : null,
      orderValue: occasion.orderValue ?? null,
      currency: occasion.currency?.toUpperCase() ?? null,
      code: newCode(),
      scheduledFor,
    })
    if (!row) repeated++
    else if (row.status === 'scheduled') {
      await deps.enqueueSend(tx, row, scheduledFor)
      scheduled++
    }
  }
  return { scheduled, repeated }
}

/**
 * Schedules the occasion's review requests, one per platform of the configuration in force, `delay_hours`
 * after the event. Runs in the caller's transaction, which holds the event; the limit of one request per
 * customer per platform per 30 days is counted across the agency (`parent_account`) under a lock on the
 * customer and platform, so concurrent events schedule one.
 */
export async function scheduleReviewRequests(
  deps: ScheduleDeps,
  tx: Database,
  occasion: ReviewOccasion,
): Promise<EventOutcome> {
  const config = await configurationInForce(tx, {
    account_id: occasion.accountId,
    parent_account: occasion.parentAccount,
  })
  if (!config) return skipped(NO_CONFIGURATION)
  const refused = refusal(config, occasion)
  if (refused) return skipped(refused)
  if (occasion.sourceRef.length > PROVIDER_ID_MAX_LENGTH)
    return failed({
      reason: SOURCE_REF_TOO_LONG,
      reasonText: `The payment or order id is longer than ${PROVIDER_ID_MAX_LENGTH} characters`,
    })
  const customer = reachableCustomer(occasion.customer)
  const customerKey = customerKeyOf(customer)
  if (!customerKey || !reachable(config, customer))
    return skipped(
      { reason: SKIP_REASONS.missingContact, reasonText: NO_CONTACT_TEXTS[config.sendMethod] },
      customerKey,
    )
  const unmet = await unmetCondition(tx, config, occasion, customerKey)
  if (unmet) return skipped(unmet, customerKey)

  const { scheduled, repeated } = await schedulePerPlatform(deps, tx, occasion, config, {
    key: customerKey,
    ...customer,
  })
  deps.log.info(
    { event_id: occasion.eventId, account_id: occasion.accountId, scheduled, repeated },
    'review requests scheduled',
  )
  if (scheduled > 0) return { status: 'processed', reason: null, reasonText: null, customerKey }
  if (repeated === config.platforms.length)
    return skipped(
      {
        reason: SKIP_REASONS.repeatedEvent,
        reasonText: 'This payment or order already scheduled its review requests, from an earlier event',
      },
      customerKey,
    )
  return skipped(
    {
      reason: SKIP_REASONS.frequencyLimit,
      reasonText: `The customer was already asked on each of the configuration's platforms in the last ${REVIEW_REQUEST_WINDOW_DAYS} days (one request per customer per platform per ${REVIEW_REQUEST_WINDOW_DAYS} days)`,
    },
    customerKey,
  )
}
