import { createPublicKey, type KeyObject, verify } from 'node:crypto'
import { ConfigError } from '../../config.js'

/** SendGrid's Signed Event Webhook headers (Node lower-cases header names). */
export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature'
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp'

/** How far the signed timestamp may be from now, either way: Stripe's tolerance, as Standard Webhooks'. */
const SIGNATURE_TOLERANCE_SECONDS = 300

const NOT_A_P256_KEY = 'SENDGRID_WEBHOOK_PUBLIC_KEY must be an ECDSA P-256 public key (base64 DER or PEM)'

/**
 * The verification key SendGrid shows for the Signed Event Webhook: base64 DER (SPKI), as its settings
 * page gives it, or PEM. Anything but a P-256 key is refused at start, not at the first webhook.
 */
export function parseWebhookPublicKey(text: string): KeyObject {
  const value = text.trim()
  let key: KeyObject
  try {
    key = value.includes('-----BEGIN')
      ? createPublicKey(value)
      : createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' })
  } catch {
    throw new ConfigError(NOT_A_P256_KEY)
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ConfigError(NOT_A_P256_KEY)
  }
  return key
}

/** Unix seconds, as SendGrid writes the timestamp header, within the tolerance of now. */
function isFresh(timestamp: string): boolean {
  const seconds = Date.now() / 1000
  return /^\d{1,12}$/.test(timestamp) && Math.abs(seconds - Number(timestamp)) <= SIGNATURE_TOLERANCE_SECONDS
}

/**
 * ECDSA P-256 / SHA-256 over the timestamp header followed by the raw body bytes, the signature being
 * base64 DER, as SendGrid signs it; and the timestamp within 300 s of now, so that a captured post cannot
 * be replayed later (SendGrid documents no window; 300 s is Stripe's and Standard Webhooks').
 */
export function verifyEventWebhookSignature(
  key: KeyObject,
  signed: { signature: string | undefined; timestamp: string | undefined; rawBody: Buffer },
): boolean {
  const { signature, timestamp, rawBody } = signed
  if (!signature || !timestamp || !isFresh(timestamp)) return false
  try {
    return verify(
      'sha256',
      Buffer.concat([Buffer.from(timestamp, 'utf8'), rawBody]),
      { key, dsaEncoding: 'der' },
      Buffer.from(signature, 'base64'),
    )
  } catch {
    // Garbage that does not even decode as a DER signature is just an invalid signature.
    return false
  }
}
