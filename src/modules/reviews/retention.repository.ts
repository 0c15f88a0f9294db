import { and, ne, type SQL } from 'drizzle-orm'
import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { reviewWebhookEvents } from './tables.js'

/**
 * Stripe's, Square's and the accounts' events once applied (processed, skipped or failed): one still
 * `received` waits for its job however old. They are also the accounts' order history, which the
 * `new` and `vip` customer segments count: the default period outlasts the `vip` year.
 */
export const webhookEventsRetention = (periodMs: number | undefined): RetentionRule => ({
  table: reviewWebhookEvents,
  periodMs,
  expendable: (cutoff) =>
    and(
      writtenBefore(reviewWebhookEvents.id, reviewWebhookEvents.createdAt, cutoff),
      ne(reviewWebhookEvents.status, 'received'),
    ) as SQL,
})
