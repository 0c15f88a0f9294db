import type { Platform } from '../../platform/context.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import { onAccountRemoved, PROVIDER_CLEAN_UP_RETRIES } from '../accounts/account-removal.service.js'
import { leadsDepsOf } from './deps.js'
import { captureLead, type EnqueueCapture } from './lead-capture.service.js'
import {
  queueDueSyncs,
  runQueuedSync,
  SYNC_CAMPAIGN_JOB,
  SYNC_DUE_CAMPAIGNS_JOB,
  SYNC_HOLD_MS,
  type SyncJob,
} from './lead-sync.service.js'
import { fileLeadEvent, requeueUnprocessedEvents } from './lead-webhook.service.js'
import {
  type PageUnsubscription,
  queuePageUnsubscriptions,
  unsubscribeRemovedPage,
} from './page-unsubscription.service.js'
import { leadEventsRetention } from './retention.repository.js'

/** Files one stored lead event's `leadgen` changes (`lead_webhook_events`). */
export const LEAD_EVENT_JOB = 'leads.webhook-event'
/** Queues the lead events whose job could not be queued when they were stored. */
export const REQUEUE_LEAD_EVENTS_JOB = 'leads.requeue-lead-events'
/** Unsubscribes our app from a page of a removed account's campaigns (`PageUnsubscription`). */
export const UNSUBSCRIBE_PAGE_JOB = 'leads.unsubscribe-removed-page'
/** Fetches one lead from Graph and captures it into a contact. */
export const CAPTURE_LEAD_JOB = 'leads.capture-lead'

interface LeadEventJob {
  event_id: string
}
/** The lead's account rides with its id, so that every query of the capture names the account. */
interface CaptureLeadJob {
  account_id: string
  lead_id: string
}

/**
 * Queues a stored event's filing soon, batched with others: one job per event, however often queued. Its
 * account is known only once filed (the campaign claiming the page), so the filing counts against the page
 * the event names (`meta-page:<id>`, read from the event as posted, no query): one page's flood of leads
 * holds only its share of the filing workers. Its captures count against the account.
 */
export const queueLeadEvent = (queue: JobQueue, eventId: string, payload?: unknown) =>
  queue.enqueueSoon<LeadEventJob>(
    LEAD_EVENT_JOB,
    { event_id: eventId },
    { singletonKey: eventId, account: pageOf(payload) },
  )

/** The page of the event's first entry (Meta's page ids are digits), as the filing's group. */
function pageOf(payload: unknown): { id: string } | null {
  const id = (payload as { entry?: { id?: unknown }[] } | undefined)?.entry?.[0]?.id
  const page = typeof id === 'number' ? String(id) : id
  return typeof page === 'string' && /^\d{1,32}$/.test(page) ? { id: `meta-page:${page}` } : null
}

/**
 * Queues a lead's capture in the caller's transaction. A retry is keyed by its attempt, so a job that runs
 * twice queues one next attempt; first captures are queued once by the transaction that filed the lead.
 */
export const queueLeadCapture =
  (queue: JobQueue): EnqueueCapture =>
  (tx, accountId, leadId, retry) =>
    queue.enqueue<CaptureLeadJob>(
      tx,
      CAPTURE_LEAD_JOB,
      { account_id: accountId, lead_id: leadId },
      retry && { startAfter: retry.startAfter, singletonKey: `${leadId}:${retry.attempt}` },
    )

/** The leads module's jobs; defined before the queue starts (the app's onReady). */
export function defineLeadsJobs(platform: Platform): void {
  const { db, log, queue } = platform
  const unsubscribing = { db, log, graph: platform.config.leads, secretsKey: platform.config.secretsKey }
  queue.define({
    name: UNSUBSCRIBE_PAGE_JOB,
    handle: (data: PageUnsubscription) => unsubscribeRemovedPage(unsubscribing, data),
    ...PROVIDER_CLEAN_UP_RETRIES,
  })
  onAccountRemoved(platform.changes, (tx, accountIds) =>
    queuePageUnsubscriptions(tx, accountIds, (executor, job) =>
      queue.enqueue(executor, UNSUBSCRIBE_PAGE_JOB, job, {
        singletonKey: `${job.account_id}:${job.page_id}`,
      }),
    ),
  )
  const enqueueCapture = queueLeadCapture(queue)
  const capture = { ...leadsDepsOf(platform), enqueueCapture }
  queue.define({
    name: LEAD_EVENT_JOB,
    handle: (data: LeadEventJob) => fileLeadEvent({ db, log, enqueueCapture }, data.event_id),
    retryLimit: 10,
    retryDelaySeconds: 2,
    // Lead events arrive in bursts: 32 per fetch, filed two at a time to leave the API its connections.
    batchSize: 32,
    concurrency: 2,
  })
  queue.define({
    name: REQUEUE_LEAD_EVENTS_JOB,
    handle: () => requeueUnprocessedEvents({ db, log }, (id) => queueLeadEvent(queue, id)),
    cron: '* * * * *',
  })
  queue.define({
    name: CAPTURE_LEAD_JOB,
    handle: (data: CaptureLeadJob) => captureLead(capture, data.account_id, data.lead_id),
    // A failed fetch is recorded and queued again by the capture itself; these retries are for the database.
    retryLimit: 5,
    retryDelaySeconds: 5,
    // Most of a capture is waiting for Graph, outside any transaction: several at once.
    batchSize: 16,
    concurrency: 8,
  })
  queue.define({
    name: SYNC_CAMPAIGN_JOB,
    handle: (data: SyncJob) => runQueuedSync(capture, data.account_id, data.campaign_id),
    // Graph is read page after page: a few campaigns at a time, each as long as a sync may hold its campaign.
    batchSize: 4,
    concurrency: 2,
    lockSeconds: SYNC_HOLD_MS / 1000,
  })
  queue.define({
    name: SYNC_DUE_CAMPAIGNS_JOB,
    handle: async () => {
      const queued = await queueDueSyncs({
        db,
        queue,
        intervalMinutes: platform.config.leads.syncIntervalMinutes,
      })
      if (queued > 0) log.info({ campaigns: queued }, 'lead campaign syncs queued')
    },
    cron: '* * * * *',
  })
  platform.retention.register(leadEventsRetention(platform.config.retention.leadWebhookEvents))
}
