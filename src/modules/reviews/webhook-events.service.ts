import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Invalid, Unavailable } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import type { Logger } from '../../platform/log/logger.js'
import { getAccount, isAccountServing } from '../accounts/accounts.service.js'
import type { TriggerType } from './documents.schemas.js'
import { type EventOutcome, failed, type ScheduleDeps } from './scheduling.service.js'
import type { WEBHOOK_SOURCES } from './tables.js'
import {
  findReceivedBefore,
  insertWebhookEvent,
  listWebhookEvents,
  lockWebhookEvent,
  receivedEventsList,
  recordOutcome,
  type WebhookEventRow,
} from './webhook-events.repository.js'
import {
  PROVIDER_ID_MAX_LENGTH,
  type WebhookEvent,
  type WebhookEventsQuery,
} from './webhook-events.schemas.js'

export type WebhookSource = (typeof WEBHOOK_SOURCES)[number]

/** A provider's event as read from its post, before it is stored. */
export interface WebhookPost {
  /** The provider's event id: a repeated one is recognised and applied once. */
  eventId: string
  type: string
  /** The trigger its kind reports, if any. */
  trigger: TriggerType | null
  payload: unknown
  /** The account it names, when it names one. */
  accountId: string | undefined
}

/**
 * A provider's event id, refused before anything is stored (400 naming `field`) when longer than the reviews
 * keep: no provider sends one, and the provider's dashboard shows the refused delivery.
 */
export function keptEventId(field: string, id: string): string {
  if (id.length > PROVIDER_ID_MAX_LENGTH)
    throw new Invalid(`${field} must be at most ${PROVIDER_ID_MAX_LENGTH} characters long`)
  return id
}

/** How long a received event waits for its job before it is queued again, and how many at a time. */
const REQUEUE_AFTER_MS = 60_000
const REQUEUE_BATCH = 1000

/** The spec: "A missing `account_id` in metadata fails processing". */
export const MISSING_ACCOUNT_ID = 'missing_account_id'
/** The failure of an event naming no account this service holds (unknown, or removed). */
export const UNKNOWN_ACCOUNT = 'unknown_account'

/**
 * Stores the event, then queues its processing; a repeated event stores and queues nothing. The stored row
 * is the durable record: the provider is answered once it is committed, and its job is queued soon after,
 * batched with others (an event whose job could not be queued is queued again by
 * REQUEUE_RECEIVED_EVENTS_JOB, so nothing received is lost). One statement, not a transaction of four round
 * trips (docs/decisions.md). When the event cannot be stored the provider is answered 503 and retries. The
 * stored row's id, or null for a repeated event.
 */
export async function receiveWebhookPost(
  deps: { db: Database; log: Logger },
  source: WebhookSource,
  post: WebhookPost,
  queueProcessing: (eventRowId: string, accountId: string | undefined) => void,
): Promise<string | null> {
  let id: string | null
  try {
    id = await insertWebhookEvent(deps.db, {
      source,
      eventId: post.eventId,
      type: post.type,
      trigger: post.trigger,
      accountId: post.accountId ?? null,
      payload: post.payload,
    })
  } catch (error) {
    deps.log.error(
      { err: error, source },
      'review webhook event could not be stored; the provider will retry',
    )
    throw new Unavailable('The event could not be stored; please retry')
  }
  if (!id) {
    deps.log.info({ source, event_id: post.eventId }, 'review webhook event repeated; already stored')
    return null
  }
  queueProcessing(id, post.accountId)
  return id
}

/**
 * Queues again the events still `received` a while after they arrived: those whose job could not be queued
 * when they were stored. A job already queued for one is not doubled (one job per event).
 */
export async function requeueReceivedEvents(
  deps: { db: Database; log: Logger },
  queueProcessing: (eventRowId: string) => void,
  now = new Date(),
): Promise<void> {
  const ids = await findReceivedBefore(deps.db, new Date(now.getTime() - REQUEUE_AFTER_MS), REQUEUE_BATCH)
  for (const id of ids) queueProcessing(id)
  if (ids.length > 0) deps.log.warn({ events: ids.length }, 'review webhook events queued again')
}

/**
 * The account an event names, with its parent; or the event's failure when it names none that exists. A
 * removed account's (its rows still going) fails as an unknown one's: it schedules nothing.
 */
export async function accountOfEvent(
  tx: Database,
  accountId: string | undefined,
): Promise<{ accountId: string; parentAccount: string | null } | { failure: EventOutcome }> {
  if (!accountId)
    return { failure: failed({ reason: MISSING_ACCOUNT_ID, reasonText: 'The event names no account' }) }
  const serving = isId(accountId) && (await isAccountServing(tx, accountId, 'visit'))
  const account = serving ? await getAccount(tx, accountId) : null
  if (!account)
    return {
      failure: failed({
        reason: UNKNOWN_ACCOUNT,
        reasonText: 'The event names an account that does not exist',
      }),
    }
  return { accountId: account._id, parentAccount: account.parent_account }
}

export type ApplyEvent = (deps: ScheduleDeps, tx: Database, event: WebhookEventRow) => Promise<EventOutcome>

/**
 * Applies a stored event once: it is locked meanwhile, and an event already applied is left alone (a job
 * run twice). Its outcome (processed, skipped or failed, with the reason) is kept with it for the operator.
 */
export async function processWebhookEvent(
  deps: ScheduleDeps & { db: Database },
  eventRowId: string,
  applyBySource: Record<WebhookSource, ApplyEvent>,
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const event = await lockWebhookEvent(tx, eventRowId)
    if (event?.status !== 'received') return
    const outcome = await applyBySource[event.source](deps, tx, event)
    await recordOutcome(tx, event.id, {
      status: outcome.status,
      reason: outcome.reason,
      reasonText: outcome.reasonText,
      customerKey: outcome.customerKey,
      accountId: outcome.accountId ?? event.accountId,
      // An event for no account held keeps no customer's data, only its outcome for the operator: a removed
      // account's removal never reaches it, and an unknown account has none to remove it with.
      ...(outcome.reason === UNKNOWN_ACCOUNT && { payload: {} }),
    })
    const log = outcome.status === 'failed' ? deps.log.warn.bind(deps.log) : deps.log.info.bind(deps.log)
    log(
      { source: event.source, event_id: event.eventId, status: outcome.status, reason: outcome.reason },
      'review webhook event applied',
    )
  })
}

const webhookEventView = (row: WebhookEventRow): WebhookEvent => ({
  _id: row.id,
  source: row.source,
  event_id: row.eventId,
  type: row.type,
  account_id: row.accountId,
  status: row.status,
  reason: row.reason,
  payload: row.payload,
  created_at: row.createdAt.toISOString(),
  processed_at: row.processedAt?.toISOString() ?? null,
})

/** `GET /v1/admin/reviews/webhook-events`: what the review webhooks received, `?status=failed` to act on. */
export function listReceivedEvents(
  db: Database,
  query: WebhookEventsQuery,
): Promise<{ data: WebhookEvent[]; pagination: Pagination | CursorPagination }> {
  return paginateList(
    receivedEventsList,
    query,
    (window) => listWebhookEvents(db, { status: query.status, source: query.source }, window),
    webhookEventView,
  )
}
