import { and, isNotNull, type SQL } from 'drizzle-orm'
import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { leadWebhookEvents } from './tables.js'

/** Meta's lead events once filed: the leads they named are kept (customer data, never removed). */
export const leadEventsRetention = (periodMs: number | undefined): RetentionRule => ({
  table: leadWebhookEvents,
  periodMs,
  expendable: (cutoff) =>
    and(
      writtenBefore(leadWebhookEvents.id, leadWebhookEvents.receivedAt, cutoff),
      isNotNull(leadWebhookEvents.processedAt),
    ) as SQL,
})
