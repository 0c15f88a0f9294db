import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { funnelShortLinkClicks } from './tables.js'

/** Raw clicks, kept for audit: a click is counted in the daily roll-up as it arrives. */
export const clicksRetention = (periodMs: number | undefined): RetentionRule => ({
  table: funnelShortLinkClicks,
  periodMs,
  expendable: (cutoff) => writtenBefore(funnelShortLinkClicks.id, funnelShortLinkClicks.clickedAt, cutoff),
})
