import type { KeyObject } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { holdsUnstorable, replaceUnstorable } from '../../platform/db/storable.js'
import { commitWithoutFlushWait, inTransaction } from '../../platform/db/transaction.js'
import type { Events } from '../../platform/events/emit.js'
import { Forbidden, Unavailable } from '../../platform/http/errors.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import type { Logger } from '../../platform/log/logger.js'
import { findSupportMessagesOfCommunications } from '../support/support.service.js'
import {
  findEventBatchState,
  insertEventBatch,
  insertPermanentDoNotDisturbEntries,
  markEventBatchProcessed,
  type StoredEventEffect,
  storeBatchEvents,
} from './delivery-events.repository.js'
import { verifyEventWebhookSignature } from './webhook-signature.js'

/** What receiving and applying delivery events needs. */
export interface DeliveryEventsDeps {
  db: Database
  /** The `module` tag of the configured provider's records (`mailProviderTag`), which events apply to. */
  providerTag: string
  events: Events
  log: Logger
}

export const DND_REASONS = {
  unsubscribe: 'Unsubscribed through the email provider webhook',
  spamreport: 'Reported as spam through the email provider webhook',
  hardBounce: 'Hard bounce reported by the email provider',
} as const

export const INVALID_WEBHOOK_SIGNATURE = 'Invalid webhook signature'

/**
 * What SendGrid posted, read from the exact bytes it sent: with SENDGRID_WEBHOOK_PUBLIC_KEY set, the
 * signature is checked first (403 without a valid one). A byte-order mark before the JSON is ignored, as
 * the service's own JSON parser ignores it; a body that is not JSON reads as nothing.
 */
export function readEventPost(
  publicKey: KeyObject | undefined,
  post: { signature: string | undefined; timestamp: string | undefined; rawBody: Buffer },
): unknown {
  if (publicKey && !verifyEventWebhookSignature(publicKey, post))
    throw new Forbidden(INVALID_WEBHOOK_SIGNATURE)
  try {
    return JSON.parse(post.rawBody.toString('utf8').replace(/^\ufeff/, ''))
  } catch {
    return undefined
  }
}

/**
 * Stores the batch as SendGrid posted it and queues its processing, in one transaction, so that an
 * answered batch is never lost and never left unprocessed. The spec answers 200 to every post, so a post
 * that is no JSON array of events is dropped with a warning. When the batch cannot be stored: 503, not a
 * 500; SendGrid redelivers on 5xx, and 503 says plainly that the same batch should come back.
 */
export async function receiveEventBatch(
  deps: Pick<DeliveryEventsDeps, 'db' | 'log'>,
  payload: unknown,
  enqueueProcessing: (tx: Database, batchId: string) => Promise<unknown>,
): Promise<void> {
  // A post that is no JSON array of events (SendGrid never sends one) would only leave a row behind.
  const isEvent = (item: unknown) => typeof item === 'object' && item !== null && !Array.isArray(item)
  if (!Array.isArray(payload) || !payload.some(isEvent)) {
    deps.log.warn('delivery event post holds no JSON array of events; answered 200 and dropped')
    return
  }
  try {
    await inTransaction(deps.db, async (tx) => {
      const batchId = await insertEventBatch(tx, payload.map(storableEvent))
      await enqueueProcessing(tx, batchId)
    })
  } catch (error) {
    deps.log.error({ err: error }, 'delivery events could not be stored; SendGrid will redeliver')
    throw new Unavailable('Delivery events could not be stored; please retry')
  }
}

/** Where an event that PostgreSQL could not store as posted keeps its exact JSON text. */
export const ORIGINAL_EVENT_FIELD = 'original_json'

/**
 * The event as it can be stored. The spec has the webhook answer 200 to every post, so an event holding a
 * character PostgreSQL cannot store must neither fail its batch nor be lost: it is stored with each such
 * character replaced by U+FFFD (its usable fields are applied like any other event's) and with its exact
 * text as posted in `original_json`, where JSON escapes keep those characters.
 */
function storableEvent(event: unknown): unknown {
  if (!holdsUnstorable(event)) return event
  const original = { [ORIGINAL_EVENT_FIELD]: JSON.stringify(event) }
  const isObject = typeof event === 'object' && event !== null && !Array.isArray(event)
  return isObject ? { ...(replaceUnstorable(event) as object), ...original } : original
}

/**
 * Applies a stored batch with a fixed number of statements whatever its size (storeBatchEvents reads the
 * events where they are stored). Everything commits together, so a failed run (retried by the job queue)
 * leaves nothing half-applied; and an event's effects follow only from inserting it now, so redelivered
 * or concurrently processed events count once.
 */
export async function processEventBatch(deps: DeliveryEventsDeps, batchId: string): Promise<void> {
  const { db, log } = deps
  const batch = await findEventBatchState(db, batchId)
  if (!batch) {
    log.warn({ batch_id: batchId }, 'delivery event batch not found; nothing to process')
    return
  }
  if (batch.processedAt) return

  const applied = await inTransaction(db, async (tx) => {
    // The raw batch is durable already and this job is completed in a later, flushed commit.
    await commitWithoutFlushWait(tx)
    const applied = await storeBatchEvents(tx, batchId, deps.providerTag)
    await insertPermanentDoNotDisturbEntries(tx, doNotDisturbEntries(applied.effects))
    await emitSupportMessageAcks(tx, deps.events, applied.effects)
    await markEventBatchProcessed(tx, batchId)
    return applied
  })

  if (applied.unmatched > 0 || applied.invalid > 0) {
    log.info(
      {
        batch_id: batchId,
        unmatched: applied.unmatched,
        invalid: applied.invalid,
        sg_event_ids: applied.unmatchedSample,
      },
      'delivery events without a known record or account, or unusable, were kept in the raw batch only',
    )
  }
}

/**
 * Rule 3: a newly stored `open` of an email shown in a support room (see inbound.ts) emits
 * `supportMessageAck` for its support message; one query per account with such opens.
 */
async function emitSupportMessageAcks(
  tx: Database,
  events: Events,
  effects: StoredEventEffect[],
): Promise<void> {
  const opened = new Map<string, Set<string>>()
  for (const { event, accountId, communicationId } of effects) {
    if (event !== 'open' || !communicationId) continue
    opened.set(accountId, (opened.get(accountId) ?? new Set()).add(communicationId))
  }
  for (const [accountId, communicationIds] of opened) {
    for (const message of await findSupportMessagesOfCommunications(tx, accountId, [...communicationIds])) {
      await events.emit(tx, accountId, 'supportMessageAck', {
        roomId: message.room_id,
        messageId: message._id,
      })
    }
  }
}

/**
 * Addresses no mail may go to any more (unsubscribes, spam reports, hard bounces), once per account and
 * address (one reason kept when several apply); trimmed as the do-not-disturb list stores addresses.
 */
function doNotDisturbEntries(effects: StoredEventEffect[]) {
  const entries = new Map<string, { accountId: string; value: string; reason: string }>()
  for (const effect of effects) {
    const reason = doNotDisturbReason(effect)
    const value = effect.email.trim()
    // An address longer than SMTP carries was never sent to, and fits no index of the list.
    if (!reason || !value || value.length > EMAIL_MAX_LENGTH) continue
    const key = `${effect.accountId} ${value.toLowerCase()}`
    if (!entries.has(key)) entries.set(key, { accountId: effect.accountId, value, reason })
  }
  return [...entries.values()]
}

function doNotDisturbReason(effect: StoredEventEffect): string | undefined {
  if (effect.event === 'unsubscribe') return DND_REASONS.unsubscribe
  if (effect.event === 'spamreport') return DND_REASONS.spamreport
  // Only a hard bounce lists the address; a `blocked` (soft) bounce may well deliver next time.
  if (effect.event === 'bounce' && effect.bounceType === 'bounce') return DND_REASONS.hardBounce
  return undefined
}
