import { and, ne, not, type SQL, sql } from 'drizzle-orm'
import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { reviewRequests, reviewWebhookEvents } from './tables.js'

/**
 * Stripe's, Square's and the accounts' events once applied (processed, skipped or failed): one still
 * `received` waits for its job however old. They are also the accounts' order history, which the
 * `new` and `vip` customer segments count: the default period outlasts the `vip` year. An event a review
 * request came from stays as long as the request (customer data, never removed by retention) points at it.
 */
export const webhookEventsRetention = (periodMs: number | undefined): RetentionRule => ({
  table: reviewWebhookEvents,
  periodMs,
  expendable: (cutoff) =>
    and(
      writtenBefore(reviewWebhookEvents.id, reviewWebhookEvents.createdAt, cutoff),
      ne(reviewWebhookEvents.status, 'received'),
      not(requestMadeFrom(reviewWebhookEvents)),
    ) as SQL,
})

/** Whether a review request was made from the event, found through `review_requests_account_event`. */
const requestMadeFrom = (events: typeof reviewWebhookEvents) =>
  sql`exists (select 1 from ${reviewRequests} where ${reviewRequests.accountId} = ${events.accountId} and ${reviewRequests.eventId} = ${events.id})`
