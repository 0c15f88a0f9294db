import type { Platform } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import { jobAccountOf } from '../../platform/jobs/fair-share.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import { onAccountRemoved, PROVIDER_CLEAN_UP_RETRIES } from '../accounts/account-removal.service.js'
import { type DeliveryEventsDeps, processEventBatch } from './delivery-events.service.js'
import { mailProviderTag } from './mail-provider.js'
import {
  queueSubuserRemovals,
  removeSubuserAtSendgrid,
  type SubuserRemoval,
} from './mail-subusers.service.js'
import { eventBatchesRetention } from './retention.repository.js'
import { createSendgridClient } from './sendgrid.js'

/** Applies one stored batch of SendGrid delivery events (`mail_event_batches`). */
export const DELIVERY_EVENTS_JOB = 'email.delivery-events'

/** Deletes a removed account's SendGrid subuser and its Inbound Parse settings (`SubuserRemoval`). */
export const REMOVE_SUBUSER_JOB = 'email.remove-subuser'

export interface DeliveryEventsJob {
  batch_id: string
}

/**
 * Queues the processing of a stored batch with the caller's executor, so both commit together. The batch
 * counts against the account most of its events name (their `account_id` custom argument, as posted, no
 * query): SendGrid's batches are mostly one account's sends when one account sends in bulk.
 */
export function enqueueDeliveryEvents(queue: JobQueue, tx: Database, batchId: string, events: unknown) {
  return queue.enqueue<DeliveryEventsJob>(
    tx,
    DELIVERY_EVENTS_JOB,
    { batch_id: batchId },
    { account: jobAccountOf(mostNamedAccount(events)) },
  )
}

/** The `account_id` that most of the posted events name (the first of equals), if any does. */
function mostNamedAccount(events: unknown): string | undefined {
  if (!Array.isArray(events)) return undefined
  const counts = new Map<unknown, number>()
  let most: { id: unknown; count: number } | undefined
  for (const event of events) {
    const id = (event as { account_id?: unknown } | null)?.account_id
    if (typeof id !== 'string') continue
    const count = (counts.get(id) ?? 0) + 1
    counts.set(id, count)
    if (!most || count > most.count) most = { id, count }
  }
  return most?.id as string | undefined
}

/** The email module's jobs; defined before the queue starts (the app's onReady). */
export function defineEmailJobs(platform: Platform): void {
  const deps: DeliveryEventsDeps = {
    db: platform.db,
    providerTag: mailProviderTag(platform.config.mail.provider),
    events: platform.events,
    log: platform.log,
  }
  platform.queue.define({
    name: DELIVERY_EVENTS_JOB,
    handle: (data: DeliveryEventsJob) => processEventBatch(deps, data.batch_id),
    // Processing is idempotent (events are de-duplicated), so retrying a failed batch is always safe.
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    // SendGrid posts in bursts: several batches per fetch, applied concurrently, drain a backlog quickly.
    batchSize: 8,
  })
  platform.retention.register(eventBatchesRetention(platform.config.retention.mailEventBatches))

  const { sendgridBaseUrl, sendgridApiKey } = platform.config.mail
  const sendgrid = createSendgridClient(
    { baseUrl: sendgridBaseUrl, parentApiKey: sendgridApiKey },
    platform.log,
  )
  platform.queue.define({
    name: REMOVE_SUBUSER_JOB,
    handle: (data: SubuserRemoval) =>
      removeSubuserAtSendgrid({ sendgrid, sendgridApiKey, log: platform.log }, data),
    ...PROVIDER_CLEAN_UP_RETRIES,
  })
  onAccountRemoved(platform.changes, (tx, accountIds) =>
    queueSubuserRemovals(tx, accountIds, (executor, removal) =>
      platform.queue.enqueue(executor, REMOVE_SUBUSER_JOB, removal, { singletonKey: removal.account_id }),
    ),
  )
}
