import { and, isNotNull, type SQL } from 'drizzle-orm'
import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { mailEventBatches } from './tables.js'

/** SendGrid's posts once processed: their events live on in `communication_events`. */
export const eventBatchesRetention = (periodMs: number | undefined): RetentionRule => ({
  table: mailEventBatches,
  periodMs,
  expendable: (cutoff) =>
    and(
      writtenBefore(mailEventBatches.id, mailEventBatches.receivedAt, cutoff),
      isNotNull(mailEventBatches.processedAt),
    ) as SQL,
})
