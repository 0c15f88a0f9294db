import type { Platform } from '../../platform/context.js'
import { revokeGrantsOfRemovedMember } from './grants.service.js'
import { auditEventsRetention, codesRetention, refreshTokensRetention } from './retention.repository.js'
import {
  APP_WEBHOOK_JOB,
  type AppWebhookJob,
  appWebhookAddresses,
  deliverAppNotification,
  queueAppNotifications,
  type WebhooksDeps,
} from './webhooks.service.js'

/** The oauth module's jobs and listeners; defined before the queue starts (the app's onReady). */
export function defineOAuthJobs(platform: Platform): void {
  const deps: WebhooksDeps = {
    db: platform.db,
    secretsKey: platform.config.secretsKey,
    log: platform.log,
    addresses: appWebhookAddresses(platform.config),
  }
  platform.queue.define({
    name: APP_WEBHOOK_JOB,
    handle: (job: AppWebhookJob) => deliverAppNotification(deps, job),
    // About 2 s doubled per attempt (pg-boss adds jitter): 12 retries ride out 2 to 4 hours of downtime.
    retryLimit: 12,
    retryDelaySeconds: 2,
    retryBackoff: true,
  })
  platform.changes.listen((tx, change) => queueAppNotifications(platform.queue, tx, change))
  platform.changes.listen(revokeGrantsOfRemovedMember)
  const { retention } = platform.config
  platform.retention.register(auditEventsRetention(retention.oauthAuditEvents))
  platform.retention.register(codesRetention(retention.oauthCodes))
  platform.retention.register(refreshTokensRetention(retention.oauthRefreshTokens))
}
