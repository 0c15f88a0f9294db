import type { Config } from '../../config.js'
import type { Database } from '../../platform/db/connection.js'
import { commitWithoutFlushWait, inTransaction } from '../../platform/db/transaction.js'
import type { Events } from '../../platform/events/emit.js'
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
import { mailProviderTag } from './mail-provider.js'

export const DND_REASONS = {
  unsubscribe: 'Unsubscribed through the email provider webhook',
  spamreport: 'Reported as spam through the email provider webhook',
  hardBounce: 'Hard bounce reported by the email provider',
} as const

/**
 * Stores the batch as SendGrid posted it and queues its processing, in one transaction, so that an
 * answered batch is never lost and never left unprocessed. Throws when the database is unreachable.
 */
export async function receiveEventBatch(
  db: Database,
  payload: unknown,
  enqueueProcessing: (tx: Database, batchId: string) => Promise<unknown>,
): Promise<'stored' | 'nothing to apply'> {
  // A post that is no JSON array of events (SendGrid never sends one) would only leave a row behind.
  const isEvent = (item: unknown) => typeof item === 'object' && item !== null && !Array.isArray(item)
  if (!Array.isArray(payload) || !payload.some(isEvent)) return 'nothing to apply'
  await inTransaction(db, async (tx) => {
    const batchId = await insertEventBatch(tx, payload)
    await enqueueProcessing(tx, batchId)
  })
  return 'stored'
}

/**
 * Applies a stored batch with a fixed number of statements whatever its size (storeBatchEvents reads the
 * events where they are stored). Everything commits together, so a failed run (retried by the job queue)
 * leaves nothing half-applied; and an event's effects follow only from inserting it now, so redelivered
 * or concurrently processed events count once.
 */
export async function processEventBatch(
  deps: { db: Database; config: Config; log: Logger; events: Events },
  batchId: string,
): Promise<void> {
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
    const applied = await storeBatchEvents(tx, batchId, mailProviderTag(deps.config))
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
    if (!reason || !value) continue
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
