import type { Platform } from '../../platform/context.js'
import type { Database } from '../../platform/db/connection.js'
import { jobAccountOf } from '../../platform/jobs/fair-share.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import { PROVIDER_JOB_RETRIES } from '../../platform/providers/provider-circuits.js'
import { sendDepsOf } from '../email/send.service.js'
import { applyAccountEvent } from './account-events.service.js'
import { applyOrderEvent } from './order-webhook.service.js'
import { applyPaymentEvent } from './payment-webhook.service.js'
import type { RequestKey } from './requests.repository.js'
import { webhookEventsRetention } from './retention.repository.js'
import type { ScheduleDeps } from './scheduling.service.js'
import { type SendingDeps, sendDueRequest, sendFollowUp } from './sending.service.js'
import { processWebhookEvent, requeueReceivedEvents } from './webhook-events.service.js'

/** Applies one stored review webhook event (`review_webhook_events`). */
export const WEBHOOK_EVENT_JOB = 'reviews.webhook-event'
/** Sends one scheduled review request when it is due (`startAfter`: the configuration's `delay_hours`). */
export const SEND_REQUEST_JOB = 'reviews.send-request'
/** Sends a request's one reminder, `follow_up.delay_hours` after it was sent. */
export const FOLLOW_UP_JOB = 'reviews.follow-up'

interface EventJob {
  event_id: string
}
/** A request's jobs name its account, so that every read of the request does (sharding by account). */
interface RequestJob {
  account_id: string
  request_id: string
}

/** Queues the events whose job could not be queued when they were stored (webhook-events.service.ts). */
export const REQUEUE_RECEIVED_EVENTS_JOB = 'reviews.requeue-received-events'

/**
 * Queues a stored event's processing soon, batched with others: one job per event, however often queued.
 * It counts against the account the event names (its share of the queue's workers), read from the event
 * as received, without a query: an id that is no account's only makes a group of its own, and an event
 * naming none is the platform's.
 */
export const queueWebhookEvent = (queue: JobQueue, eventRowId: string, accountId?: string) =>
  queue.enqueueSoon<EventJob>(
    WEBHOOK_EVENT_JOB,
    { event_id: eventRowId },
    { singletonKey: eventRowId, account: jobAccountOf(accountId) },
  )

/** Both keyed by the request, so a retried enqueue (a job run twice) queues one send. */
const enqueueAt = (queue: JobQueue, name: string) => (tx: Database, request: RequestKey, startAfter: Date) =>
  queue.enqueue<RequestJob>(
    tx,
    name,
    { account_id: request.accountId, request_id: request.id },
    { startAfter, singletonKey: `${request.id}:${startAfter.toISOString()}` },
  )

const requestOf = (job: RequestJob): RequestKey => ({ accountId: job.account_id, id: job.request_id })

/** The reviews module's jobs; defined before the queue starts (the app's onReady). */
export function defineReviewsJobs(platform: Platform): void {
  const { db, queue, log, config } = platform
  const schedule: ScheduleDeps & { db: Database } = {
    db,
    log,
    enqueueSend: enqueueAt(queue, SEND_REQUEST_JOB),
  }
  const sending: SendingDeps = {
    db,
    log,
    email: sendDepsOf(platform),
    sms: config.reviews.sms,
    publicBaseUrl: config.publicBaseUrl,
    enqueueSend: schedule.enqueueSend,
    enqueueFollowUp: enqueueAt(queue, FOLLOW_UP_JOB),
  }
  queue.define({
    name: WEBHOOK_EVENT_JOB,
    handle: (data: EventJob) =>
      processWebhookEvent(schedule, data.event_id, {
        paymentprovider: applyPaymentEvent,
        orderprovider: (deps, tx, event) =>
          applyOrderEvent({ ...deps, square: config.reviews.square }, tx, event),
        account: applyAccountEvent,
      }),
    retryLimit: 10,
    retryDelaySeconds: 2,
    // Webhooks arrive in bursts: 32 events per fetch drain a backlog with few of pg-boss's fetches and
    // completions, applied two at a time so that they leave the API its connections (docs/decisions.md).
    batchSize: 32,
    concurrency: 2,
  })
  queue.define({
    name: REQUEUE_RECEIVED_EVENTS_JOB,
    handle: () => requeueReceivedEvents({ db, log }, (id) => queueWebhookEvent(queue, id)),
    cron: '* * * * *',
  })
  queue.define({
    name: SEND_REQUEST_JOB,
    handle: (data: RequestJob) => sendDueRequest(sending, requestOf(data)),
    ...PROVIDER_JOB_RETRIES,
    batchSize: 4,
  })
  queue.define({
    name: FOLLOW_UP_JOB,
    handle: (data: RequestJob) => sendFollowUp(sending, requestOf(data)),
    ...PROVIDER_JOB_RETRIES,
  })
  platform.retention.register(webhookEventsRetention(config.retention.reviewWebhookEvents))
}
