import { randomBytes } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import type { Logger } from '../../platform/log/logger.js'
import { DAY_MS, HOUR_MS } from '../../platform/time.js'
import type { ConfigurationRow } from './configuration.repository.js'
import { configurationInForce } from './configuration.service.js'
import type { TriggerType } from './documents.schemas.js'
import {
  cancelScheduledOfSources,
  findRequest,
  hasCountedRequest,
  insertRequest,
  listRequests,
  lockCustomerPlatform,
  moveRequest,
  type RequestFilters,
  type RequestKey,
  type RequestRow,
  recordRefunds,
  wasRefunded,
} from './requests.repository.js'
import type { ListQuery, ReviewRequest } from './requests.schemas.js'
import { PHONE_MAX_LENGTH } from './sms-opt-outs.schemas.js'
import { countEarlierOrders } from './webhook-events.repository.js'
import { PROVIDER_ID_MAX_LENGTH } from './webhook-events.schemas.js'

/** The spec's limit: one request per customer per platform per 30 days. */
const REVIEW_REQUEST_WINDOW_DAYS = 30

/** Where the spec's 30 days ending at `now` start: a request created since holds the customer's place. */
export const requestLimitStart = (now: Date) => new Date(now.getTime() - REVIEW_REQUEST_WINDOW_DAYS * DAY_MS)

/** Customer segments, from the account's order history (docs/decisions.md). */
export const VIP_MIN_EARLIER_ORDERS = 3
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

export const REQUEST_NOT_FOUND = 'Review request not found'

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

/** What became of an event: `processed` when it scheduled at least one request. */
export interface EventOutcome {
  status: 'processed' | 'skipped' | 'failed'
  reason: string | null
  customerKey: string | null
}

export interface ScheduleDeps {
  log: Logger
  /** Queues the sending of a request at its time, with the caller's transaction. */
  enqueueSend: (tx: Database, request: RequestKey, startAfter: Date) => Promise<unknown>
}

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

const skipped = (reason: string, customerKey: string | null = null): EventOutcome => ({
  status: 'skipped',
  reason,
  customerKey,
})

/** The channels the configuration sends by, given what the customer can be reached at. */
function reachable(config: ConfigurationRow, customer: ReviewOccasion['customer']): boolean {
  if (config.sendMethod === 'email') return Boolean(customer.email)
  if (config.sendMethod === 'sms') return Boolean(customer.phone)
  return Boolean(customer.email || customer.phone)
}

/** The configuration's conditions, in the order written; the reason of the first not met. */
async function unmetCondition(
  tx: Database,
  config: ConfigurationRow,
  occasion: ReviewOccasion,
  customerKey: string,
): Promise<string | null> {
  const conditions = config.conditions ?? {}
  if (conditions.min_order_value !== undefined && (occasion.orderValue ?? 0) < conditions.min_order_value)
    return SKIP_REASONS.belowMinOrderValue
  // A refund may arrive before its payment: Stripe does not promise the order of events.
  if (conditions.exclude_refunded && (await wasRefunded(tx, occasion.accountId, occasion.sourceRef)))
    return SKIP_REASONS.refunded
  const segment = conditions.customer_segment ?? 'all'
  if (segment !== 'all') {
    const event = { id: occasion.eventId, customerKey, before: occasion.receivedAt }
    const since =
      segment === 'new' ? new Date(0) : new Date(occasion.receivedAt.getTime() - VIP_HISTORY_DAYS * DAY_MS)
    const history = await countEarlierOrders(tx, occasion.accountId, event, since)
    const inSegment = segment === 'new' ? history === 0 : history >= VIP_MIN_EARLIER_ORDERS
    if (!inSegment) return SKIP_REASONS.notInSegment
  }
  if (conditions.exclude_repeated) {
    const since = requestLimitStart(occasion.receivedAt)
    if (await hasCountedRequest(tx, parentOf(occasion), { customerKey }, since))
      return SKIP_REASONS.repeatedCustomer
  }
  return null
}

const parentOf = (occasion: Pick<ReviewOccasion, 'accountId' | 'parentAccount'>) =>
  occasion.parentAccount ?? occasion.accountId
const newCode = () => randomBytes(9).toString('base64url')

/**
 * Schedules the occasion's review requests, one per platform of the configuration in force, `delay_hours`
 * after the event, each sent by a job (`startAfter`). Runs in the caller's transaction, which holds the
 * event; the limit of one request per customer per platform per 30 days is counted across the agency
 * (`parent_account`) under a lock on the customer and platform, so concurrent events schedule one.
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
  if (!config) return skipped(SKIP_REASONS.noConfiguration)
  if (!config.enabled) return skipped(SKIP_REASONS.disabled)
  if (config.trigger !== occasion.trigger) return skipped(SKIP_REASONS.triggerMismatch)
  if (occasion.sourceRef.length > PROVIDER_ID_MAX_LENGTH)
    return { status: 'failed', reason: SOURCE_REF_TOO_LONG, customerKey: null }
  const customer = reachableCustomer(occasion.customer)
  const customerKey = customerKeyOf(customer)
  if (!customerKey || !reachable(config, customer)) return skipped(SKIP_REASONS.missingContact, customerKey)
  const unmet = await unmetCondition(tx, config, occasion, customerKey)
  if (unmet) return skipped(unmet, customerKey)

  const parentAccount = parentOf(occasion)
  const scheduledFor = new Date(occasion.receivedAt.getTime() + config.delayHours * HOUR_MS)
  let scheduled = 0
  let repeated = 0
  for (const platform of config.platforms) {
    await lockCustomerPlatform(tx, parentAccount, { customerKey, platform })
    const limited = await hasCountedRequest(
      tx,
      parentAccount,
      { customerKey, platform },
      requestLimitStart(occasion.receivedAt),
    )
    const row = await insertRequest(tx, occasion.accountId, {
      parentAccount,
      eventId: occasion.eventId,
      sourceRef: occasion.sourceRef,
      customerKey,
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
  deps.log.info(
    { event_id: occasion.eventId, account_id: occasion.accountId, scheduled, repeated },
    'review requests scheduled',
  )
  if (scheduled > 0) return { status: 'processed', reason: null, customerKey }
  if (repeated === config.platforms.length) return skipped(SKIP_REASONS.repeatedEvent, customerKey)
  return skipped(SKIP_REASONS.frequencyLimit, customerKey)
}

/**
 * A refund, kept whatever the configuration says (`exclude_refunded` is read again when a request is due);
 * the scheduled requests of its payment are cancelled when the configuration excludes refunds.
 */
export async function cancelRefundedRequests(
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
  if (!config?.conditions?.exclude_refunded) return skipped('refunds_not_excluded')
  const cancelled = await cancelScheduledOfSources(tx, refund.accountId, sourceRefs, SKIP_REASONS.refunded)
  return cancelled > 0
    ? { status: 'processed', reason: null, customerKey: null }
    : skipped('nothing_scheduled')
}

export const requestView = (row: RequestRow): ReviewRequest => ({
  _id: row.id,
  account_id: row.accountId,
  event_id: row.eventId,
  source_ref: row.sourceRef,
  customer: { name: row.customerName, email: row.customerEmail, phone: row.customerPhone },
  platform: row.platform,
  send_method: row.sendMethod,
  status: row.status,
  reason: row.reason,
  order_value: row.orderValue,
  currency: row.currency,
  scheduled_for: row.scheduledFor.toISOString(),
  sent_at: row.sentAt?.toISOString() ?? null,
  clicked_at: row.clickedAt?.toISOString() ?? null,
  follow_up_sent_at: row.followUpSentAt?.toISOString() ?? null,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** A `customer` filter: an email when it has an @, else a phone. */
const asContact = (value: string) => (value.includes('@') ? { email: value } : { phone: value })

export function listAccountRequests(
  db: Database,
  accountId: string,
  query: ListQuery,
): Promise<{ data: ReviewRequest[]; pagination: Pagination }> {
  const filters: RequestFilters = {
    status: query.status,
    platform: query.platform,
    customer: query.customer ? (customerKeyOf(asContact(query.customer)) ?? undefined) : undefined,
    from: query.from ? new Date(query.from) : undefined,
    to: query.to ? new Date(query.to) : undefined,
  }
  return paginate(query, (window) => listRequests(db, accountId, filters, window), requestView)
}

/** `POST /reviews/requests/:id/cancel`: a scheduled request only (409 otherwise; another account's: 404). */
export async function cancelRequest(
  db: Database,
  accountId: string,
  requestId: string,
): Promise<ReviewRequest> {
  const row = isId(requestId) ? await findRequest(db, accountId, requestId) : undefined
  if (!row) throw new NotFound(REQUEST_NOT_FOUND)
  const cancelled = await moveRequest(db, accountId, row.id, 'scheduled', {
    status: 'cancelled',
    reason: 'cancelled_by_user',
  })
  if (!cancelled)
    throw new Conflict(`Only a scheduled review request can be cancelled; this one is ${row.status}`)
  return requestView(cancelled)
}
