import { Webhook } from 'standardwebhooks'
import type { Config } from '../../config.js'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { Invalid } from '../../platform/http/errors.js'
import { OutboundAddressPolicy, outboundRefusalIn } from '../../platform/http/outbound-address.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import type { Logger } from '../../platform/log/logger.js'
import { providerRequest } from '../../platform/providers/http-client.js'
import { CONTACT_CREATED, CONTACT_UPDATED, CRM_CONTACTS_READ } from '../accounts/contacts.service.js'
import { LEADS_READ } from '../leads/lead-access.service.js'
import {
  LEAD_CREATED,
  SOCIALNET_DISCONNECTED,
  SOCIALNET_TOKEN_INVALID,
} from '../leads/notifications.service.js'
import { findApp } from './apps.repository.js'
import { webhookSecretOf } from './apps.service.js'
import { findAppsToNotify, holdsLiveGrant } from './webhooks.repository.js'

export const APP_WEBHOOK_JOB = 'oauth.app-webhook'

/** The changes apps are told of, each with the scope an app's grant in the account must carry. */
const SCOPE_OF_EVENT: Record<string, string> = {
  [CONTACT_CREATED]: CRM_CONTACTS_READ.oauthScope,
  [CONTACT_UPDATED]: CRM_CONTACTS_READ.oauthScope,
  [LEAD_CREATED]: LEADS_READ.oauthScope,
  [SOCIALNET_DISCONNECTED]: LEADS_READ.oauthScope,
  [SOCIALNET_TOKEN_INVALID]: LEADS_READ.oauthScope,
}

/** What delivering app notifications needs. */
export interface WebhooksDeps {
  db: Database
  /** SECRETS_ENCRYPTION_KEY, which seals the apps' webhook secrets. */
  secretsKey: Buffer | undefined
  log: Logger
  /** In production, where notifications may go (appWebhookAddresses); anywhere else, anywhere. */
  addresses: OutboundAddressPolicy | undefined
}

/**
 * In production, app webhooks go to public addresses only, and to the ranges APP_WEBHOOK_ALLOWED_CIDRS
 * lists: an app's URL must not reach the cloud metadata service or the network the service runs in. Outside
 * production, anywhere (local receivers and tests are on 127.0.0.1).
 */
export function appWebhookAddresses(
  config: Pick<Config, 'nodeEnv' | 'oauth'>,
): OutboundAddressPolicy | undefined {
  if (config.nodeEnv !== 'production') return undefined
  return new OutboundAddressPolicy(config.oauth.webhookAllowedRanges)
}

/** A webhook_url given at registration or update, refused when its host is an address notifications may not reach. */
export function assertWebhookUrlAddress(
  addresses: OutboundAddressPolicy | undefined,
  webhookUrl: string | null | undefined,
): void {
  if (!addresses || !webhookUrl || !URL.canParse(webhookUrl)) return
  const refusal = addresses.refusalOfUrl(new URL(webhookUrl))
  if (refusal) throw new Invalid(`webhook_url must be a public address: ${refusal.message}`)
}

/** The spec's notification body. */
export interface AppNotification {
  event: string
  data: object
  account_id: string
  timestamp: string
}

export interface AppWebhookJob {
  client_id: string
  /** `webhook-id`: the same on every attempt, so that a receiver can drop a redelivery. */
  message_id: string
  notification: AppNotification
}

/** One job per app to tell, queued in the change's transaction. */
export async function queueAppNotifications(
  queue: JobQueue,
  tx: Database,
  change: RecordChange,
): Promise<void> {
  const scope = SCOPE_OF_EVENT[change.event]
  if (!scope) return
  const notification: AppNotification = {
    event: change.event,
    data: change.data,
    account_id: change.account_id,
    timestamp: change.occurred_at.toISOString(),
  }
  for (const clientId of await findAppsToNotify(tx, change.account_id, scope)) {
    await queue.enqueue<AppWebhookJob>(tx, APP_WEBHOOK_JOB, {
      client_id: clientId,
      message_id: `msg_${newId()}`,
      notification,
    })
  }
}

/**
 * POSTs the notification signed as Standard Webhooks say: HMAC-SHA256 of `id.timestamp.body` under the
 * app's webhook secret, in `webhook-signature`. Anything but a 2xx throws, so the job is retried. In
 * production the connection goes only to an address the policy allows, checked after DNS resolution; a
 * refused one fails the attempt like no answer (the range may be allowed, or the name fixed, meanwhile).
 */
export async function deliverAppNotification(deps: WebhooksDeps, job: AppWebhookJob): Promise<void> {
  const { notification } = job
  const { log } = deps
  const delivery = { client_id: job.client_id, webhook_id: job.message_id, event: notification.event }
  const app = await findApp(deps.db, job.client_id)
  if (!app?.webhookUrl) return log.info(delivery, 'app webhook dropped: the app has no webhook_url any more')
  // Retries can run for hours: an app whose access was taken back meanwhile is told nothing more.
  const scope = SCOPE_OF_EVENT[notification.event] ?? ''
  if (!(await holdsLiveGrant(deps.db, notification.account_id, app.id, scope)))
    return log.info(delivery, 'app webhook dropped: the app no longer holds a grant in the account')
  const secret = webhookSecretOf(deps.secretsKey, app)
  if (!secret)
    return log.warn(delivery, 'app webhook dropped: the app has no webhook secret; rotate it to get one')

  const body = JSON.stringify(notification)
  const sentAt = new Date()
  // Never the URL's query or credentials in a log or a job's error: only where it went.
  const destination = new URL(app.webhookUrl).origin
  const response = await providerRequest(
    {
      method: 'POST',
      url: app.webhookUrl,
      headers: {
        'webhook-id': job.message_id,
        'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
        'webhook-signature': new Webhook(secret).sign(job.message_id, sentAt, body),
      },
      body,
      retries: 0,
      timeoutMs: 5_000,
      ...(deps.addresses && { dispatcher: await deps.addresses.dispatcher() }),
    },
    log,
  ).catch((error: unknown) => {
    const refused = outboundRefusalIn(error)
    throw refused ? new Error(`app webhook to ${destination} refused: ${refused.message}`) : error
  })
  if (response.status < 200 || response.status >= 300)
    throw new Error(`app webhook to ${destination} answered ${response.status}`)
}
