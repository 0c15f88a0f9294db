import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import type { Logger } from '../../platform/log/logger.js'
import { providerRequest } from '../../platform/providers/http-client.js'

/** SMS_PROVIDER and Twilio's account (config.reviews.sms). */
export interface SmsSettings {
  provider: 'outbox' | 'twilio'
  accountSid?: string
  authToken?: string
  from?: string
  baseUrl: string
}

/** Twilio's error 21610: the number replied STOP to the sender, and Twilio refuses to message it. */
export const TWILIO_UNSUBSCRIBED_RECIPIENT = 21610

/** Twilio's refusal: its HTTP status, its error code (21211: invalid To, 21610: the number replied STOP). */
export class TwilioError extends Error {
  constructor(
    readonly status: number,
    readonly code: number | undefined,
    message: string,
  ) {
    super(message)
    this.name = 'TwilioError'
  }
}

const messagesUrl = (settings: SmsSettings) =>
  `${settings.baseUrl}/2010-04-01/Accounts/${encodeURIComponent(settings.accountSid ?? '')}/Messages.json`
const basicAuthorization = (settings: SmsSettings) =>
  `Basic ${Buffer.from(`${settings.accountSid ?? ''}:${settings.authToken ?? ''}`).toString('base64')}`

/** How many of the newest messages to a number are read to find one sent by an attempt that died. */
const LOOKUP_PAGE_SIZE = 50

/**
 * The message Twilio took with this body to this number from this sender, among its newest ones there, or
 * undefined: asked when the process that sent it died before recording it. Twilio may prefix a body (a
 * trial account's), so a body containing ours matches; ours holds the request's own tracked link.
 */
export async function findTwilioSms(
  settings: SmsSettings,
  message: { to: string; from?: string; body: string },
  log: Logger,
): Promise<{ sid: string } | undefined> {
  const query = new URLSearchParams({ To: message.to, PageSize: String(LOOKUP_PAGE_SIZE) })
  const from = message.from ?? settings.from
  if (from) query.set('From', from)
  const response = await providerRequest(
    {
      provider: 'twilio',
      url: `${messagesUrl(settings)}?${query}`,
      headers: { authorization: basicAuthorization(settings) },
    },
    log,
  )
  const body = (response.body ?? {}) as {
    messages?: { sid?: string; body?: string }[]
    code?: number
    message?: string
  }
  if (response.status >= 300)
    throw new TwilioError(response.status, body.code, body.message ?? `Twilio answered ${response.status}`)
  const found = body.messages?.find((sent) => sent.sid && sent.body?.includes(message.body))
  return found?.sid ? { sid: found.sid } : undefined
}

/** Sends one SMS through Twilio's Messages API: form-encoded, Basic auth with the account SID and token. */
export async function sendTwilioSms(
  settings: SmsSettings,
  message: { to: string; from?: string; body: string },
  log: Logger,
): Promise<{ sid: string; status: string }> {
  const form = new URLSearchParams({
    To: message.to,
    From: message.from ?? settings.from ?? '',
    Body: message.body,
  })
  const response = await providerRequest(
    {
      provider: 'twilio',
      method: 'POST',
      url: messagesUrl(settings),
      headers: {
        authorization: basicAuthorization(settings),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: form.toString(),
      // Sending is not idempotent: a retried POST whose first arrived would text twice.
      retries: 0,
    },
    log,
  )
  const body = (response.body ?? {}) as { sid?: string; status?: string; code?: number; message?: string }
  if (response.status >= 300 || !body.sid)
    throw new TwilioError(response.status, body.code, body.message ?? `Twilio answered ${response.status}`)
  return { sid: body.sid, status: body.status ?? 'queued' }
}

/** The header Twilio signs every webhook request with. */
export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature'

/** A webhook's POST parameters as a form parser reads them: a repeated name gives an array. */
export type TwilioParams = Record<string, string | string[] | undefined>

/**
 * Twilio's webhook signature, as its "Webhooks security" page documents it: the full URL Twilio called, then
 * every POST parameter sorted by name, each name immediately followed by its value (a repeated name once per
 * value, its values sorted, as Twilio's own libraries do), signed with HMAC-SHA1 keyed by the auth token, in
 * base64.
 */
export function twilioSignature(authToken: string, url: string, params: TwilioParams): string {
  let signed = url
  for (const name of Object.keys(params).sort()) {
    const value = params[name] ?? ''
    for (const each of Array.isArray(value) ? [...value].sort() : [value]) signed += name + each
  }
  return createHmac('sha1', authToken).update(signed, 'utf8').digest('base64')
}

/** Whether `signature` is Twilio's for this request; never true without an auth token to check it with. */
export function isTwilioSignatureValid(
  authToken: string | undefined,
  signature: string | undefined,
  request: { url: string; params: TwilioParams },
): boolean {
  if (!authToken) return false
  return isSameSecret(signature, twilioSignature(authToken, request.url, request.params))
}
