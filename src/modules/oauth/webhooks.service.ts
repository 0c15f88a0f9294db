import { Webhook } from 'standardwebhooks'
import type { Config } from '../../config.js'
import type { Database } from '../../platform/db/connection.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { Invalid } from '../../platform/http/errors.js'
import { OutboundAddressPolicy, outboundRefusalIn } from '../../platform/http/outbound-address.js'
import type { Logger } from '../../platform/log/logger.js'
import { inSpan } from '../../platform/tracing/tracing.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { CONTACT_CREATED, CONTACT_UPDATED, CRM_CONTACTS_READ } from '../accounts/contacts.service.js'
import { LEADS_READ } from '../leads/lead-access.service.js'
import {
  LEAD_CREATED,
  SOCIALNET_DISCONNECTED,
  SOCIALNET_TOKEN_INVALID,
} from '../leads/notifications.service.js'
import { webhookSecretOf } from './apps.service.js'
import type { WebhookAttempt } from './tables.js'
import { type ClaimedDelivery, insertDeliveries, type Settlement } from './webhook-deliveries.repository.js'
import { findAppsToNotify, holdsLiveGrant } from './webhooks.repository.js'

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
  /** How long a receiver has to answer (APP_WEBHOOK_TIMEOUT_MS). */
  timeoutMs: number
  /**
   * How old a delivery is before its app's grant is checked again (OAUTH_REVOCATION_CACHE_MS): recorded in
   * the change's transaction only if the grant was live, a grant taken back is heeded within this time, as
   * the grant's access tokens are refused within it.
   */
  grantRecheckAfterMs: number
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

/** The `webhook-id` of every attempt of a delivery. */
export const webhookIdOf = (deliveryId: string) => `msg_${deliveryId}`

/** One delivery per app to tell, recorded in the change's transaction: sent once it commits. */
export async function recordAppNotifications(tx: Database, change: RecordChange): Promise<void> {
  const scope = SCOPE_OF_EVENT[change.event]
  if (!scope) return
  const notification: AppNotification = {
    event: change.event,
    data: change.data,
    account_id: change.account_id,
    timestamp: change.occurred_at.toISOString(),
  }
  const clientIds = await findAppsToNotify(tx, change.account_id, scope)
  await insertDeliveries(
    tx,
    clientIds.map((clientId) => ({
      clientId,
      accountId: change.account_id,
      event: change.event,
      notification,
    })),
  )
}

/** What came of a delivery's turn: an attempt (delivered when answered 2xx), or none, and why. */
export type AttemptResult = { attempt: WebhookAttempt; delivered: boolean } | { dropped: string }

/**
 * Makes an attempt at the delivery, unless the app is no longer to be told: it lost its webhook_url, its
 * grant in the account, or its webhook secret; or the account no longer sends data out (removed, its rows
 * going later; suspended), so what was pending at its DELETE or suspension is dropped, not sent.
 */
export async function attemptDelivery(deps: WebhooksDeps, delivery: ClaimedDelivery): Promise<AttemptResult> {
  const { webhookUrl } = delivery.app
  if (!webhookUrl) return { dropped: 'the app has no webhook_url any more' }
  if (!(await isAccountServing(deps.db, delivery.accountId, 'share')))
    return { dropped: 'the account is removed or suspended' }
  // Retries can run for hours: an app whose access was taken back meanwhile is told nothing more.
  if (!(await stillGranted(deps, delivery)))
    return { dropped: 'the app no longer holds a grant in the account' }
  const secret = webhookSecretOf(deps.secretsKey, delivery.app)
  if (!secret) return { dropped: 'the app has no webhook secret; rotate it to get one' }
  return postSigned(deps, { url: webhookUrl, secret, webhookId: webhookIdOf(delivery.id) }, delivery)
}

/** Whether the app may still be told: checked again once the delivery is older than `grantRecheckAfterMs`. */
async function stillGranted(deps: WebhooksDeps, delivery: ClaimedDelivery): Promise<boolean> {
  if (Date.now() - delivery.createdAt.getTime() < deps.grantRecheckAfterMs) return true
  const scope = SCOPE_OF_EVENT[delivery.event] ?? ''
  return holdsLiveGrant(deps.db, delivery.accountId, delivery.clientId, scope)
}

/** Why an attempt got no answer, without the URL: the address refused, the timeout, or the connection's error. */
function failureOf(error: unknown, timeoutMs: number): string {
  const refused = outboundRefusalIn(error)
  if (refused) return `refused: ${refused.message}`
  if (error instanceof DOMException && error.name === 'TimeoutError')
    return `no answer within ${timeoutMs} ms`
  const cause = error instanceof Error ? (error.cause as { code?: string } | undefined) : undefined
  return cause?.code ?? (error instanceof Error ? error.name : 'no answer')
}

/**
 * POSTs the notification signed as Standard Webhooks say: HMAC-SHA256 of `id.timestamp.body` under the
 * app's webhook secret, in `webhook-signature`. Delivered when answered 2xx; a redirect is a failure ("update
 * the webhook URL instead"), as are any other status, the timeout and no answer. In production the connection
 * goes only to an address the policy allows, checked after DNS resolution; a refused one fails the attempt
 * like no answer (the range may be allowed, or the name fixed, meanwhile).
 */
async function postSigned(
  deps: WebhooksDeps,
  target: { url: string; secret: string; webhookId: string },
  delivery: ClaimedDelivery,
): Promise<AttemptResult> {
  const body = JSON.stringify(delivery.notification)
  const sentAt = new Date()
  const url = new URL(target.url)
  // Never the URL's query or credentials in a log, a span or an attempt: only where it went.
  const destination = `${url.origin}${url.pathname}`
  const span = {
    kind: 'client',
    attributes: { 'http.request.method': 'POST', 'server.address': url.hostname, 'url.full': destination },
  } as const
  const attempt = (statusCode: number | null, error: string | null): WebhookAttempt => ({
    at: sentAt.toISOString(),
    status_code: statusCode,
    duration_ms: Date.now() - sentAt.getTime(),
    error,
  })
  try {
    const response = await inSpan('POST', span, async (current) => {
      const answer = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': target.webhookId,
          'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
          'webhook-signature': new Webhook(target.secret).sign(target.webhookId, sentAt, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.timeout(deps.timeoutMs),
        ...(deps.addresses && { dispatcher: await deps.addresses.dispatcher() }),
      })
      current.setAttributes({ 'http.response.status_code': answer.status })
      return answer
    })
    await response.body?.cancel()
    const delivered = response.status >= 200 && response.status < 300
    return { attempt: attempt(response.status, null), delivered }
  } catch (error) {
    const failure = failureOf(error, deps.timeoutMs)
    deps.log.info({ destination, webhook_id: target.webhookId, failure }, 'app webhook attempt got no answer')
    return { attempt: attempt(null, failure), delivered: false }
  }
}

/**
 * Where an attempt leaves the delivery. Standard Webhooks: "retry delivery following a retry schedule
 * spanning multiple days, with an exponential backoff", and "add some level of random jitter to retries":
 * each wait is half its step of the schedule plus a random part of the other half, so retries of many
 * deliveries spread out while the schedule's period still holds (between half and all of it). After the
 * last step the delivery is dead.
 */
export function settlementOf(
  result: AttemptResult,
  seriesAttempts: number,
  retryScheduleMs: number[],
  now = Date.now(),
): Settlement {
  if ('dropped' in result) return { status: 'dropped', reason: result.dropped }
  const { attempt } = result
  if (result.delivered) return { status: 'succeeded', attempt }
  const step = retryScheduleMs[seriesAttempts]
  if (step === undefined) return { status: 'dead', attempt }
  return { status: 'retrying', attempt, nextAttemptAt: new Date(now + step / 2 + (Math.random() * step) / 2) }
}
