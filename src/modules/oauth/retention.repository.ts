import { and, inArray, lt, type SQL, sql } from 'drizzle-orm'
import { type RetentionRule, writtenBefore } from '../../platform/jobs/retention.js'
import { oauthAuditEvents, oauthCodes, oauthRefreshTokens, oauthWebhookDeliveries } from './tables.js'
import { SETTLED } from './webhook-deliveries.repository.js'

/** What happened to grants, for operators. */
export const auditEventsRetention = (periodMs: number | undefined): RetentionRule => ({
  table: oauthAuditEvents,
  periodMs,
  expendable: (cutoff) => writtenBefore(oauthAuditEvents.id, oauthAuditEvents.createdAt, cutoff),
})

/**
 * Codes expired (used or not) longer than the period: until then a replayed code is still recognised and
 * revokes its grant. A code expires minutes after it is made, so its id's time serves the range.
 */
export const codesRetention = (periodMs: number | undefined): RetentionRule => ({
  table: oauthCodes,
  periodMs,
  expendable: (cutoff) => writtenBefore(oauthCodes.id, oauthCodes.expiresAt, cutoff),
})

/**
 * When a refresh token stopped being usable: revoked, else expired (`least` passes over a null). Indexed
 * (`oauth_refresh_tokens_unusable_since`): a grant's token may be revoked any time after it was made.
 */
export const unusableSince = sql`least(${oauthRefreshTokens.revokedAt}, ${oauthRefreshTokens.expiresAt})`

/**
 * Refresh tokens revoked or expired longer than the period: until then a reused one is still recognised
 * and revokes its grant. A grant keeps its live token, so its revocation is still answered (grants.repository).
 */
export const refreshTokensRetention = (periodMs: number | undefined): RetentionRule => ({
  table: oauthRefreshTokens,
  periodMs,
  expendable: (cutoff) => lt(unusableSince, cutoff),
})

/**
 * App webhook deliveries settled (succeeded, dead or dropped) and untouched longer than the period: until
 * then the app's developer sees them and may replay them. Found along the primary key by the time they were
 * queued; one replayed since waits for its own period.
 */
export const webhookDeliveriesRetention = (periodMs: number | undefined): RetentionRule => ({
  table: oauthWebhookDeliveries,
  periodMs,
  expendable: (cutoff) =>
    and(
      writtenBefore(oauthWebhookDeliveries.id, oauthWebhookDeliveries.createdAt, cutoff),
      lt(oauthWebhookDeliveries.updatedAt, cutoff),
      inArray(oauthWebhookDeliveries.status, SETTLED),
    ) as SQL,
})
