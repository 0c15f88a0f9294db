import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { mailEventBatches } from './tables.js'
import { parseWebhookPublicKey } from './webhook-signature.js'

/**
 * The delivery events webhook when SENDGRID_WEBHOOK_PUBLIC_KEY is set (SendGrid's Signed Event Webhook); the
 * unsigned webhook is in delivery-events.test.ts.
 */

const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
// As SendGrid shows the verification key: base64 of the DER (SPKI) encoding.
const publicKeyBase64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64')

test.override('appEnv', { SENDGRID_WEBHOOK_PUBLIC_KEY: publicKeyBase64 })

/** A batch of one event for an account, as SendGrid posts it. */
const batch = () =>
  JSON.stringify([
    {
      email: 'recipient@example.com',
      timestamp: 1_700_000_000,
      event: 'delivered',
      sg_event_id: `ev-${newId()}`,
      account_id: newId(),
    },
  ])

const signature = (key: KeyObject, timestamp: string, body: string) =>
  sign('sha256', Buffer.from(timestamp + body), key).toString('base64')

const post = (t: TestApp, body: string, headers: Record<string, string>) =>
  t.app.inject({
    method: 'POST',
    url: '/v1/integrations/mailprovider/webhook',
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  })

const storedBatches = async (t: TestApp) =>
  (await t.database.handle.db.select().from(mailEventBatches)).length

describe('signed event webhook', () => {
  test('accepts a batch signed with the configured key', async ({ t }) => {
    const body = batch()
    const timestamp = String(Math.floor(Date.now() / 1000))
    const response = await post(t, body, {
      'X-Twilio-Email-Event-Webhook-Signature': signature(privateKey, timestamp, body),
      'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(await storedBatches(t)).toBe(1)
  })

  test('answers 403 and stores nothing when the signature is missing, wrong or for other bytes', async ({
    t,
  }) => {
    const body = batch()
    const timestamp = String(Math.floor(Date.now() / 1000))
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey
    const attempts: Record<string, string>[] = [
      {},
      { 'X-Twilio-Email-Event-Webhook-Signature': signature(privateKey, timestamp, body) },
      {
        'X-Twilio-Email-Event-Webhook-Signature': signature(other, timestamp, body),
        'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
      },
      {
        'X-Twilio-Email-Event-Webhook-Signature': signature(privateKey, timestamp, `${body} `),
        'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
      },
      {
        'X-Twilio-Email-Event-Webhook-Signature': signature(privateKey, timestamp, body),
        'X-Twilio-Email-Event-Webhook-Timestamp': String(Number(timestamp) + 1),
      },
      {
        'X-Twilio-Email-Event-Webhook-Signature': 'bm90IGEgc2lnbmF0dXJl',
        'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
      },
    ]
    const before = await storedBatches(t)
    for (const headers of attempts) {
      const response = await post(t, body, headers)
      expect(response.statusCode, JSON.stringify(Object.keys(headers))).toBe(403)
      expect(response.json()).toEqual({ success: false, errno: 403, message: 'Invalid webhook signature' })
    }
    expect(await storedBatches(t)).toBe(before)
  })

  test('reads the key as base64 DER or PEM, and refuses a key that is not P-256', () => {
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString()
    expect(parseWebhookPublicKey(pem).equals(publicKey)).toBe(true)
    expect(parseWebhookPublicKey(publicKeyBase64).equals(publicKey)).toBe(true)
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey
    expect(() => parseWebhookPublicKey(rsa.export({ format: 'pem', type: 'spki' }).toString())).toThrow(
      'P-256',
    )
  })
})
