import { createPublicKey, type KeyObject, verify } from 'node:crypto'

/** SendGrid's Signed Event Webhook headers (Node lower-cases header names). */
export const SIGNATURE_HEADER = 'x-twilio-email-event-webhook-signature'
export const TIMESTAMP_HEADER = 'x-twilio-email-event-webhook-timestamp'

/**
 * The verification key SendGrid shows for the Signed Event Webhook: base64 DER (SPKI), as its settings
 * page gives it, or PEM. Anything but a P-256 key is refused at start, not at the first webhook.
 */
export function parseWebhookPublicKey(text: string): KeyObject {
  const value = text.trim()
  const key = value.includes('-----BEGIN')
    ? createPublicKey(value)
    : createPublicKey({ key: Buffer.from(value, 'base64'), format: 'der', type: 'spki' })
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error('SENDGRID_WEBHOOK_PUBLIC_KEY must be an ECDSA P-256 public key')
  }
  return key
}

/**
 * ECDSA P-256 / SHA-256 over the timestamp header followed by the raw body bytes, the signature being
 * base64 DER, as SendGrid signs it. No freshness window on the timestamp: SendGrid redelivers failed
 * batches for up to a day, and a replayed batch is harmless because events are de-duplicated.
 */
export function verifyEventWebhookSignature(
  key: KeyObject,
  signed: { signature: string | undefined; timestamp: string | undefined; rawBody: Buffer },
): boolean {
  const { signature, timestamp, rawBody } = signed
  if (!signature || !timestamp) return false
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
