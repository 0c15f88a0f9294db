import type { Platform } from '../../platform/context.js'
import { revokeGrantsOfMember } from './grants.service.js'
import {
  auditEventsRetention,
  codesRetention,
  refreshTokensRetention,
  webhookDeliveriesRetention,
} from './retention.repository.js'
import { createWebhookSender, type WebhookSender } from './webhook-sender.js'
import { appWebhookAddresses, recordAppNotifications } from './webhooks.service.js'

/**
 * The oauth module's jobs and listeners; defined before the queue starts (the app's onReady). Answers the
 * sender of app webhooks, which the app starts where workers run.
 */
export function defineOAuthJobs(platform: Platform): WebhookSender {
  const { webhooks } = platform.config.oauth
  const sender = createWebhookSender(
    {
      db: platform.db,
      secretsKey: platform.config.secretsKey,
      log: platform.log,
      addresses: appWebhookAddresses(platform.config),
      timeoutMs: webhooks.timeoutMs,
      grantRecheckAfterMs: platform.config.oauth.revocationCacheMs,
    },
    webhooks,
  )
  platform.changes.listen(recordAppNotifications)
  platform.changes.listen(revokeGrantsOfMember)
  const { retention } = platform.config
  platform.retention.register(auditEventsRetention(retention.oauthAuditEvents))
  platform.retention.register(codesRetention(retention.oauthCodes))
  platform.retention.register(refreshTokensRetention(retention.oauthRefreshTokens))
  platform.retention.register(webhookDeliveriesRetention(retention.appWebhookDeliveries))
  return sender
}
