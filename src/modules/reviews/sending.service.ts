import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { keyClaimsIn } from '../../platform/db/key-claims.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { DomainError } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import { EffectUnderWay, performOncePerKey } from '../../platform/providers/once-per-key.js'
import { HOUR_MS } from '../../platform/time.js'
import type { Account } from '../accounts/accounts.schemas.js'
import { getAccount } from '../accounts/accounts.service.js'
import { DoNotDisturbRefusal } from '../email/do-not-disturb.service.js'
import type { SendDeps } from '../email/send.service.js'
import { sendEmailOncePerKey } from '../email/send-keys.service.js'
import { lookUpVariables, renderNamedValues, renderVariables } from '../email/variables.service.js'
import type { ConfigurationRow } from './configuration.repository.js'
import { configurationInForce } from './configuration.service.js'
import type { TemplateChannel } from './documents.schemas.js'
import {
  findRequest,
  hasCountedRequest,
  insertSmsMessage,
  moveRequest,
  type RequestChanges,
  type RequestKey,
  type RequestRow,
  wasRefunded,
} from './requests.repository.js'
import { reviewUrlFor } from './review-links.service.js'
import { requestLimitStart, SKIP_REASONS } from './scheduling.service.js'
import { nextSendWindowOpening } from './send-window.js'
import { hasOptOut } from './sms-opt-outs.repository.js'
import { phoneKeyOf } from './sms-opt-outs.service.js'
import { reviewSmsSendKeys } from './tables.js'
import { DEFAULT_TEMPLATES, requireTemplate } from './templates.service.js'
import {
  findTwilioSms,
  type SmsSettings,
  sendTwilioSms,
  TWILIO_UNSUBSCRIBED_RECIPIENT,
  TwilioError,
} from './twilio.js'

/** The `uid` review requests are sent as: no user sends them (the sender is the configuration's address). */
export const REVIEW_REQUEST_SENDER = 'review-requests'

export interface SendingDeps {
  db: Database
  log: Logger
  email: SendDeps
  sms: SmsSettings
  publicBaseUrl: string
  enqueueSend: (tx: Database, request: RequestKey, startAfter: Date) => Promise<unknown>
  enqueueFollowUp: (tx: Database, request: RequestKey, startAfter: Date) => Promise<unknown>
}

/** Whether a request's messages went out, and why not. */
type Delivery = { outcome: 'sent' } | { outcome: 'skipped' | 'failed'; reason: string }

/** `{{review.link}}` leads here: `GET /r/:code` counts the click, then sends the customer on. */
export const trackedLink = (publicBaseUrl: string, code: string) => `${publicBaseUrl}/r/${code}`

interface Message {
  channel: TemplateChannel
  subject: string
  body: string
}

/** The message per channel: the configuration's template for its own channel, else the built-in one. */
async function messagesFor(db: Database, config: ConfigurationRow, request: RequestRow): Promise<Message[]> {
  const named = config.templateId ? await requireTemplate(db, config.accountId, config.templateId) : undefined
  const channels: TemplateChannel[] = []
  if (request.sendMethod !== 'sms' && request.customerEmail) channels.push('email')
  if (request.sendMethod !== 'email' && request.customerPhone) channels.push('sms')
  return channels.map((channel) => ({
    channel,
    ...(named?.channel === channel ? named : DEFAULT_TEMPLATES[channel]),
  }))
}

function render(template: string, values: Record<string, string>, html: boolean) {
  return renderNamedValues(template, values, { html })
}

async function sendByEmail(
  deps: SendingDeps,
  context: { request: RequestRow; config: ConfigurationRow; account: Account },
  message: Message,
  values: Record<string, string>,
  key: string,
): Promise<void> {
  const { request, config, account } = context
  const sender = config.fromEmail ?? `no-reply@${new URL(deps.publicBaseUrl).hostname}`
  await sendEmailOncePerKey(
    deps.email,
    { uid: REVIEW_REQUEST_SENDER, account_id: request.accountId, parent_account: account.parent_account },
    {
      subject: render(message.subject, values, false),
      sender: { email: sender, name: account.name },
      recipients: [{ email: request.customerEmail as string, name: request.customerName || undefined }],
      content: [{ type: 'text/html', value: render(message.body, values, true) }],
      origin: 'reviews',
      attachments: [],
    },
    key,
  )
}

/** An SMS body: the reviews' own values, then the email area's `{{variables}}` with the customer as `contact`. */
async function renderSms(
  db: Database,
  request: RequestRow,
  template: string,
  values: Record<string, string>,
) {
  const found = await lookUpVariables(db, request.accountId, {
    contact: { name: request.customerName, email: request.customerEmail, phone: request.customerPhone ?? '' },
  })
  return renderVariables(render(template, values, false), found, new Map(), { html: false })
}

const smsSendKeys = keyClaimsIn(reviewSmsSendKeys, {
  accountId: reviewSmsSendKeys.accountId,
  key: reviewSmsSendKeys.key,
  attemptId: reviewSmsSendKeys.smsMessageId,
  claimedAt: reviewSmsSendKeys.claimedAt,
  recordedAt: reviewSmsSendKeys.recordedAt,
})

/**
 * Texts the customer, unless they replied STOP to the account's SMS (`opted_out`). The number is sent and
 * kept in the form opt-outs are kept in (digits and '+'), so that a reply finds the accounts that texted it.
 * Once per key, as the email is: a retry whose first attempt died asks Twilio whether that text arrived.
 */
async function sendBySms(
  deps: SendingDeps,
  context: { request: RequestRow; config: ConfigurationRow },
  message: Message,
  values: Record<string, string>,
  key: string,
): Promise<'sent' | 'opted_out'> {
  const { request, config } = context
  const { db, sms, log } = deps
  const to = phoneKeyOf(request.customerPhone) ?? (request.customerPhone as string)
  if (await hasOptOut(db, request.accountId, to)) return 'opted_out'
  const from = config.fromPhone ?? sms.from ?? null
  const text = { to, from: from ?? undefined, body: await renderSms(db, request, message.body, values) }
  const twilio = sms.provider === 'twilio'
  await performOncePerKey<{ sid: string }, void>({
    db,
    claims: smsSendKeys,
    accountId: request.accountId,
    key,
    staleAfterMs: deps.email.claimStaleMs,
    underWay: 'This review SMS is being sent',
    newAttemptId: newId,
    perform: async (smsMessageId, taken) => {
      const sent = taken ?? (twilio ? await sendTwilioSms(sms, text, log) : undefined)
      await inTransaction(db, async (tx) => {
        await insertSmsMessage(tx, request.accountId, {
          id: smsMessageId,
          requestId: request.id,
          to,
          from,
          body: text.body,
          provider: sms.provider,
          providerId: sent?.sid ?? null,
        })
        await smsSendKeys.record(tx, request.accountId, key)
      })
    },
    replay: async () => undefined,
    lookUp: async () => (twilio ? findTwilioSms(sms, text, log) : undefined),
  })
  return 'sent'
}

/** What became of one channel's message: a refusal because the customer opted out is `opted_out`. */
type ChannelOutcome = { outcome: 'sent' | 'opted_out' } | { outcome: 'failed'; reason: string }

/** Sends one channel's message; a refusal of the email module or of Twilio becomes its outcome. */
async function sendChannel(
  deps: SendingDeps,
  context: { request: RequestRow; config: ConfigurationRow; account: Account },
  message: Message,
  values: Record<string, string>,
  key: string,
): Promise<ChannelOutcome> {
  try {
    if (message.channel === 'sms') return { outcome: await sendBySms(deps, context, message, values, key) }
    await sendByEmail(deps, context, message, values, key)
    return { outcome: 'sent' }
  } catch (error) {
    // An earlier attempt holds the message: the job is retried until it has finished, or died long enough ago.
    if (error instanceof EffectUnderWay) throw error
    if (error instanceof DoNotDisturbRefusal) return { outcome: 'opted_out' }
    if (error instanceof DomainError && error.statusCode < 500)
      return { outcome: 'failed', reason: error.message }
    if (error instanceof TwilioError && error.code === TWILIO_UNSUBSCRIBED_RECIPIENT)
      return { outcome: 'opted_out' }
    if (error instanceof TwilioError && error.status < 500)
      return { outcome: 'failed', reason: `Twilio ${error.code ?? error.status}: ${error.message}` }
    throw error
  }
}

/**
 * Sends each channel's message. The request is sent when one channel is; `skipped` (`opted_out`) when the
 * customer opted out of every channel; else `failed` with the first channel's reason.
 */
async function deliver(
  deps: SendingDeps,
  context: { request: RequestRow; config: ConfigurationRow; account: Account },
  reviewUrl: string,
  keyPrefix: string,
): Promise<Delivery> {
  const values = {
    'customer.name': context.request.customerName,
    'business.name': context.account.name,
    'review.link': trackedLink(deps.publicBaseUrl, context.request.code),
  }
  deps.log.debug({ request_id: context.request.id, review_url: reviewUrl }, 'sending review request')
  const outcomes: ChannelOutcome[] = []
  for (const message of await messagesFor(deps.db, context.config, context.request))
    outcomes.push(await sendChannel(deps, context, message, values, `${keyPrefix}:${context.request.id}`))
  const failures = outcomes.flatMap((channel) => (channel.outcome === 'failed' ? [channel.reason] : []))
  if (outcomes.some((channel) => channel.outcome === 'sent')) {
    if (failures.length > 0)
      deps.log.warn({ request_id: context.request.id, reasons: failures }, 'review request channel failed')
    return { outcome: 'sent' }
  }
  if (failures[0] !== undefined) return { outcome: 'failed', reason: failures[0] }
  if (outcomes.length === 0) return { outcome: 'skipped', reason: SKIP_REASONS.missingContact }
  return { outcome: 'skipped', reason: SKIP_REASONS.optedOut }
}

async function accountAndConfiguration(db: Database, accountId: string) {
  const account = await getAccount(db, accountId)
  const config = account
    ? await configurationInForce(db, { account_id: account._id, parent_account: account.parent_account })
    : undefined
  return { account, config }
}

/** Moves a scheduled request on, unless another run moved it first. */
const moveScheduled = (db: Database, request: RequestRow, changes: RequestChanges) =>
  moveRequest(db, request.accountId, request.id, 'scheduled', changes)

/**
 * The send job of a scheduled request. At send time it reads again what may have changed since it was
 * scheduled: the configuration (disabled: `cancelled`), the refund state (refunded while refunds are
 * excluded: `cancelled`), the send window (outside it: moved to its next opening), the 30-day limit, the
 * review link (missing: `skipped`, `no_review_link`) and, per channel, the opt-outs.
 */
export async function sendDueRequest(deps: SendingDeps, key: RequestKey, now = new Date()): Promise<void> {
  const request = await findRequest(deps.db, key.accountId, key.id)
  if (request?.status !== 'scheduled') return
  const { account, config } = await accountAndConfiguration(deps.db, request.accountId)
  if (!account || !config?.enabled) {
    await moveScheduled(deps.db, request, { status: 'cancelled', reason: 'configuration_disabled' })
    return
  }
  if (
    config.conditions?.exclude_refunded &&
    (await wasRefunded(deps.db, request.accountId, request.sourceRef))
  ) {
    await moveScheduled(deps.db, request, { status: 'cancelled', reason: SKIP_REASONS.refunded })
    return
  }
  const opening = nextSendWindowOpening(now, config.sendWindow, config.timezone)
  if (opening) {
    await inTransaction(deps.db, async (tx) => {
      if (await moveScheduled(tx, request, { scheduledFor: opening }))
        await deps.enqueueSend(tx, request, opening)
    })
    return
  }
  const limitKey = { customerKey: request.customerKey, platform: request.platform, exceptId: request.id }
  if (await hasCountedRequest(deps.db, request.parentAccount, limitKey, requestLimitStart(now))) {
    await moveScheduled(deps.db, request, { status: 'skipped', reason: SKIP_REASONS.frequencyLimit })
    return
  }
  const reviewUrl = await reviewUrlFor(deps.db, [account._id, config.accountId], request.platform)
  if (!reviewUrl) {
    await moveScheduled(deps.db, request, { status: 'skipped', reason: SKIP_REASONS.noReviewLink })
    return
  }
  const delivery = await deliver(deps, { request, config, account }, reviewUrl, 'review-request')
  await inTransaction(deps.db, async (tx) => {
    if (delivery.outcome !== 'sent') {
      await moveScheduled(tx, request, { status: delivery.outcome, reason: delivery.reason })
      return
    }
    const sent = await moveScheduled(tx, request, { status: 'sent', sentAt: now })
    if (sent && config.followUp?.enabled)
      await deps.enqueueFollowUp(tx, request, new Date(now.getTime() + config.followUp.delay_hours * HOUR_MS))
  })
  deps.log.info({ request_id: request.id, outcome: delivery.outcome }, 'review request due')
}

/**
 * The one reminder, `follow_up.delay_hours` after the send: only while the request is `sent`, so a click
 * (`clicked`) cancels it, and only while the configuration still asks for it.
 */
export async function sendFollowUp(deps: SendingDeps, key: RequestKey, now = new Date()): Promise<void> {
  const request = await findRequest(deps.db, key.accountId, key.id)
  if (request?.status !== 'sent' || request.followUpSentAt) return
  const { account, config } = await accountAndConfiguration(deps.db, request.accountId)
  if (!account || !config?.enabled || !config.followUp?.enabled) return
  const reviewUrl = await reviewUrlFor(deps.db, [account._id, config.accountId], request.platform)
  if (!reviewUrl) return
  const delivery = await deliver(deps, { request, config, account }, reviewUrl, 'review-follow-up')
  if (delivery.outcome === 'sent')
    await moveRequest(deps.db, request.accountId, request.id, 'sent', { followUpSentAt: now })
  deps.log.info({ request_id: request.id, outcome: delivery.outcome }, 'review request follow-up due')
}
