import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import type { Logger } from '../../platform/log/logger.js'
import type {
  AccountEvent,
  AccountEventBody,
  AccountEventDetail,
  EventsQuery,
} from './account-events.schemas.js'
import { INVALID_TRIGGER_TYPE, isTrigger } from './configuration.service.js'
import type { TriggerType } from './documents.schemas.js'
import { listRequestsOfEvent } from './requests.repository.js'
import { requestView } from './requests.service.js'
import { type EventOutcome, type ScheduleDeps, scheduleReviewRequests } from './scheduling.service.js'
import {
  accountEventsList,
  findAccountEvent,
  findReportedEvent,
  listAccountEvents,
  type WebhookEventRow,
} from './webhook-events.repository.js'
import { accountOfEvent, receiveWebhookPost } from './webhook-events.service.js'

export const EVENT_NOT_FOUND = 'Review event not found'

/**
 * An account's event ids are its own: they are stored behind the account's id, so two accounts may use the
 * same one, and a repeat is recognised within the account only.
 */
const storedEventId = (accountId: string, eventId: string) => `${accountId}:${eventId}`

const accountEventView = (row: WebhookEventRow): AccountEvent => ({
  _id: row.id,
  source: row.source,
  event_id: row.source === 'account' ? row.eventId.slice(row.eventId.indexOf(':') + 1) : row.eventId,
  type: row.type,
  trigger: row.trigger,
  status: row.status,
  reason: row.reason,
  reason_text: row.reasonText,
  created_at: row.createdAt.toISOString(),
  processed_at: row.processedAt?.toISOString() ?? null,
})

/**
 * `POST /reviews/events`: the event is stored and its processing queued, as a provider's webhook is
 * (receiveWebhookPost); the same `event_id` again stores nothing and answers the event first stored.
 */
export async function reportAccountEvent(
  deps: { db: Database; log: Logger },
  accountId: string,
  body: AccountEventBody,
  queueProcessing: (eventRowId: string) => void,
): Promise<{ event: AccountEvent; repeated: boolean }> {
  if (!isTrigger(body.trigger)) throw new Invalid(INVALID_TRIGGER_TYPE)
  const eventId = storedEventId(accountId, body.event_id)
  const post = { eventId, type: body.trigger, trigger: body.trigger, payload: body, accountId }
  const storedId = await receiveWebhookPost(deps, 'account', post, queueProcessing)
  const row = await findReportedEvent(deps.db, accountId, eventId)
  if (!row) throw new Error(`account event ${eventId} was stored but cannot be read`)
  return { event: accountEventView(row), repeated: storedId === null }
}

/** A stored account event, applied: review requests are scheduled when its trigger is the configuration's. */
export async function applyAccountEvent(
  deps: ScheduleDeps,
  tx: Database,
  event: WebhookEventRow,
): Promise<EventOutcome> {
  const body = event.payload as AccountEventBody
  const account = await accountOfEvent(tx, event.accountId ?? undefined)
  if ('failure' in account) return account.failure
  return scheduleReviewRequests(deps, tx, {
    eventId: event.id,
    receivedAt: event.createdAt,
    ...account,
    trigger: event.type as TriggerType,
    sourceRef: `event:${body.event_id}`,
    customer: {
      name: body.customer.name?.trim() ?? '',
      ...(body.customer.email && { email: body.customer.email }),
      ...(body.customer.phone && { phone: body.customer.phone }),
    },
    orderValue: body.order_value,
    currency: body.currency,
  })
}

/** `GET /reviews/events`: the account's events, newest first, each with what became of it and why. */
export function listEventsOfAccount(
  db: Database,
  accountId: string,
  query: EventsQuery,
): Promise<{ data: AccountEvent[]; pagination: Pagination | CursorPagination }> {
  const filters = {
    status: query.status,
    trigger: query.trigger,
    from: query.from ? new Date(query.from) : undefined,
    to: query.to ? new Date(query.to) : undefined,
  }
  return paginateList(
    accountEventsList,
    query,
    (window) => listAccountEvents(db, accountId, filters, window),
    accountEventView,
  )
}

/** `GET /reviews/events/:id`: one of the account's events, with the requests it scheduled (another's: 404). */
export async function getEventOfAccount(
  db: Database,
  accountId: string,
  eventId: string,
): Promise<AccountEventDetail> {
  const row = isId(eventId) ? await findAccountEvent(db, accountId, eventId) : undefined
  if (!row) throw new NotFound(EVENT_NOT_FOUND)
  const requests = await listRequestsOfEvent(db, accountId, row.id)
  return { ...accountEventView(row), payload: row.payload, requests: requests.map(requestView) }
}
