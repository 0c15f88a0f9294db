import type { FastifyBaseLogger } from 'fastify'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Events } from '../../platform/events/emit.js'
import { findSupportMessagesOfCommunications } from '../support/service.js'
import {
  advanceDeliveryStatuses,
  type CommunicationEventRow,
  findEventBatch,
  findSendGridCommunicationsByMessageIds,
  insertEventBatch,
  insertNewCommunicationEvents,
  insertPermanentDoNotDisturbEntries,
  markEventBatchProcessed,
} from './delivery-events.repository.js'

/**
 * A record's `delivery_status` is its newest event by the event's own timestamp. At an equal timestamp
 * (SendGrid stamps whole seconds) the later place here wins: the engagement steps in their natural
 * order, then the final states, which no other event of the same second may replace.
 */
export const DELIVERY_STATUS_ORDER = [
  'processed',
  'deferred',
  'delivered',
  'open',
  'click',
  'group_resubscribe',
  'group_unsubscribe',
  'unsubscribe',
  'spamreport',
  'dropped',
  'bounce',
] as const

export const DND_REASONS = {
  unsubscribe: 'Unsubscribed through the email provider webhook',
  spamreport: 'Reported as spam through the email provider webhook',
  hardBounce: 'Hard bounce reported by the email provider',
} as const

/** One SendGrid event, as far as this service uses it. */
interface DeliveryEvent {
  sgEventId: string
  event: string
  email: string
  timestamp: number
  sgMessageId: string | null
  /** The text of `sg_message_id` before its first dot: the `X-Message-Id` of the send (`msgID`). */
  messageId: string | null
  /** The `account_id` custom argument, set by our send on every message. */
  accountArg: string | null
  uid: string | null
  useragent: string | null
  ip: string | null
  url: string | null
  /** On `bounce`: `bounce` for a hard bounce, `blocked` for a soft one. */
  bounceType: string | null
}

/**
 * Stores the batch as SendGrid posted it and queues its processing, in one transaction, so that an
 * answered batch is never lost and never left unprocessed. Throws when the database is unreachable.
 */
export async function receiveEventBatch(
  db: Database,
  payload: unknown[],
  enqueueProcessing: (tx: Database, batchId: string) => Promise<unknown>,
): Promise<void> {
  // An empty batch has nothing to apply; storing it would only leave an empty row behind.
  if (payload.length === 0) return
  await inTransaction(db, async (tx) => {
    const batchId = await insertEventBatch(tx, payload)
    await enqueueProcessing(tx, batchId)
  })
}

/**
 * Applies a stored batch with a fixed number of queries whatever its size. Everything commits together,
 * so a failed run (retried by the job queue) leaves nothing half-applied; and an event's effects follow
 * only from inserting it now, so redelivered or concurrently processed events count once.
 */
export async function processEventBatch(
  deps: { db: Database; log: FastifyBaseLogger; events: Events },
  batchId: string,
): Promise<void> {
  const { db, log } = deps
  const batch = await findEventBatch(db, batchId)
  if (!batch) {
    log.warn({ batch_id: batchId }, 'delivery event batch not found; nothing to process')
    return
  }
  if (batch.processedAt) return
  const { events, invalid } = parseEvents(batch.payload)

  const unmatched = await inTransaction(db, async (tx) => {
    const messageIds = [...new Set(events.flatMap((e) => (e.messageId ? [e.messageId] : [])))]
    const recordByMessageId = new Map<string, { id: string; accountId: string }>()
    for (const record of await findSendGridCommunicationsByMessageIds(tx, messageIds)) {
      // Message ids are unique per send; should two records share one, the oldest keeps its events.
      if (!recordByMessageId.has(record.msgId)) recordByMessageId.set(record.msgId, record)
    }

    const pending = new Map<string, { row: CommunicationEventRow; event: DeliveryEvent }>()
    const unmatched: string[] = []
    for (const event of events) {
      const record = event.messageId ? recordByMessageId.get(event.messageId) : undefined
      // Events of unknown messages (asynchronous bounces carry no message id) still belong to the
      // account named by our custom argument; with neither, no account may see them.
      const accountId = record?.accountId ?? (isId(event.accountArg) ? event.accountArg : undefined)
      if (!accountId) {
        unmatched.push(event.sgEventId)
        continue
      }
      const key = eventKey(accountId, event.sgEventId)
      if (pending.has(key)) continue
      pending.set(key, { row: eventRow(event, accountId, record?.id ?? null), event })
    }

    const inserted = await insertNewCommunicationEvents(
      tx,
      [...pending.values()].map((p) => p.row),
    )
    const fresh = inserted.flatMap((key) => {
      const found = pending.get(eventKey(key.accountId, key.sgEventId))
      return found ? [found] : []
    })

    await advanceDeliveryStatuses(tx, latestStatuses(fresh), DELIVERY_STATUS_ORDER)
    await insertPermanentDoNotDisturbEntries(tx, doNotDisturbEntries(fresh))
    await emitSupportMessageAcks(tx, deps.events, fresh)
    await markEventBatchProcessed(tx, batchId)
    return unmatched
  })

  if (unmatched.length > 0 || invalid > 0) {
    log.info(
      { batch_id: batchId, unmatched: unmatched.length, invalid, sg_event_ids: unmatched.slice(0, 20) },
      'delivery events without a known record or account, or unusable, were kept in the raw batch only',
    )
  }
}

const eventKey = (accountId: string, sgEventId: string) => `${accountId} ${sgEventId}`

/**
 * Rule 3: a newly stored `open` of an email shown in a support room (see inbound.ts) emits
 * `supportMessageAck` for its support message; one query per account with such opens.
 */
async function emitSupportMessageAcks(tx: Database, events: Events, fresh: FreshEvent[]): Promise<void> {
  const opened = new Map<string, Set<string>>()
  for (const { row, event } of fresh) {
    if (event.event !== 'open' || !row.communicationId) continue
    opened.set(row.accountId, (opened.get(row.accountId) ?? new Set()).add(row.communicationId))
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

function eventRow(
  event: DeliveryEvent,
  accountId: string,
  communicationId: string | null,
): CommunicationEventRow {
  return {
    accountId,
    communicationId,
    sgEventId: event.sgEventId,
    event: event.event,
    email: event.email,
    timestamp: event.timestamp,
    sgMessageId: event.sgMessageId,
    uid: event.uid,
    useragent: event.useragent,
    ip: event.ip,
    url: event.url,
  }
}

type FreshEvent = { row: CommunicationEventRow; event: DeliveryEvent }

const statusRank = (status: string) => (DELIVERY_STATUS_ORDER as readonly string[]).indexOf(status)

/** Per record, the newest of the new events; the database keeps it only if it beats what is stored. */
function latestStatuses(fresh: FreshEvent[]) {
  const latest = new Map<string, { communicationId: string; accountId: string; status: string; at: number }>()
  for (const { row, event } of fresh) {
    if (!row.communicationId || statusRank(event.event) < 0) continue
    const current = latest.get(row.communicationId)
    const newer =
      !current ||
      event.timestamp > current.at ||
      (event.timestamp === current.at && statusRank(event.event) > statusRank(current.status))
    if (newer) {
      latest.set(row.communicationId, {
        communicationId: row.communicationId,
        accountId: row.accountId,
        status: event.event,
        at: event.timestamp,
      })
    }
  }
  return [...latest.values()]
}

/**
 * Addresses no mail may go to any more (unsubscribes, spam reports, hard bounces), once per account and
 * address, the batch's first reason kept; trimmed as the do-not-disturb list stores addresses.
 */
function doNotDisturbEntries(fresh: FreshEvent[]) {
  const entries = new Map<string, { accountId: string; value: string; reason: string }>()
  for (const { row, event } of fresh) {
    const reason = doNotDisturbReason(event)
    const value = event.email.trim()
    if (!reason || !value) continue
    const key = `${row.accountId} ${value.toLowerCase()}`
    if (!entries.has(key)) entries.set(key, { accountId: row.accountId, value, reason })
  }
  return [...entries.values()]
}

function doNotDisturbReason(event: DeliveryEvent): string | undefined {
  if (event.event === 'unsubscribe') return DND_REASONS.unsubscribe
  if (event.event === 'spamreport') return DND_REASONS.spamreport
  // Only a hard bounce lists the address; a `blocked` (soft) bounce may well deliver next time.
  if (event.event === 'bounce' && event.bounceType === 'bounce') return DND_REASONS.hardBounce
  return undefined
}

/** The usable events of a batch; those without an event id, a name or a timestamp are counted only. */
function parseEvents(payload: unknown[]): { events: DeliveryEvent[]; invalid: number } {
  const events: DeliveryEvent[] = []
  let invalid = 0
  for (const item of payload) {
    const event = parseEvent(item)
    if (event) events.push(event)
    else invalid++
  }
  return { events, invalid }
}

function parseEvent(item: unknown): DeliveryEvent | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined
  const fields = item as Record<string, unknown>
  const sgEventId = text(fields.sg_event_id)
  const event = text(fields.event)
  const timestamp = unixSeconds(fields.timestamp)
  if (!sgEventId || !event || timestamp === undefined) return undefined
  const sgMessageId = text(fields.sg_message_id)
  return {
    sgEventId,
    event,
    email: text(fields.email) ?? '',
    timestamp,
    sgMessageId,
    messageId: sgMessageId?.split('.')[0] || null,
    accountArg: text(fields.account_id),
    uid: text(fields.uid),
    useragent: text(fields.useragent),
    ip: text(fields.ip),
    url: text(fields.url),
    bounceType: text(fields.type),
  }
}

/** Unix seconds: SendGrid sends an integer; a numeric string is taken too. */
function unixSeconds(value: unknown): number | undefined {
  const seconds = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value
  return typeof seconds === 'number' && Number.isSafeInteger(seconds) && seconds >= 0 ? seconds : undefined
}

function text(value: unknown): string | null {
  if (typeof value === 'string') return value === '' ? null : value
  if (typeof value === 'number' || typeof value === 'boolean') return String(value)
  return null
}
