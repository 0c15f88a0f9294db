import { generateKeyPairSync } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { eventWebhookKeys, signedEventHeaders } from '../../../test/fakes/sendgrid.js'
import { buildTestApp, captureLogs, type TestApp } from '../../../test/helpers/app.js'
import { behindTlsProxy, PRODUCTION_ENV, PRODUCTION_EVENT_KEYS } from '../../../test/helpers/production.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { ConfigError } from '../../config.js'
import { newId } from '../../platform/db/ids.js'
import { mailEventBatches } from './tables.js'
import { parseWebhookPublicKey } from './webhook-signature.js'

/**
 * The delivery events webhook when SENDGRID_WEBHOOK_PUBLIC_KEY is set (SendGrid's Signed Event Webhook), and
 * production, which requires it; the unsigned webhook is in delivery-events.test.ts.
 */

const { privateKey, publicKeyBase64 } = eventWebhookKeys()
const publicKey = parseWebhookPublicKey(publicKeyBase64)

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

const nowSeconds = () => Math.floor(Date.now() / 1000)

const post = (app: TestApp['app'], body: string, headers: Record<string, string>) =>
  app.inject({
    method: 'POST',
    url: '/v1/integrations/mailprovider/webhook',
    headers: { 'content-type': 'application/json', ...headers },
    payload: body,
  })

const storedBatches = async (t: TestApp) =>
  (await t.database.handle.db.select().from(mailEventBatches)).length

const INVALID = { success: false, errno: 403, message: 'Invalid webhook signature' }

describe('signed event webhook', () => {
  test('accepts a batch signed with the configured key', async ({ t }) => {
    const body = batch()
    const response = await post(t.app, body, signedEventHeaders(privateKey, body))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(await storedBatches(t)).toBe(1)
  })

  test('answers 403 and stores nothing when the signature is missing, wrong or for other bytes', async ({
    t,
  }) => {
    const body = batch()
    const timestamp = String(nowSeconds())
    const signed = signedEventHeaders(privateKey, body, timestamp)
    const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey
    const attempts: Record<string, string>[] = [
      {},
      {
        'X-Twilio-Email-Event-Webhook-Signature': signed['X-Twilio-Email-Event-Webhook-Signature'] as string,
      },
      signedEventHeaders(other, body, timestamp),
      signedEventHeaders(privateKey, `${body} `, timestamp),
      { ...signed, 'X-Twilio-Email-Event-Webhook-Timestamp': String(Number(timestamp) + 1) },
      { ...signed, 'X-Twilio-Email-Event-Webhook-Signature': 'bm90IGEgc2lnbmF0dXJl' },
    ]
    const before = await storedBatches(t)
    for (const headers of attempts) {
      const response = await post(t.app, body, headers)
      expect(response.statusCode, JSON.stringify(Object.keys(headers))).toBe(403)
      expect(response.json()).toEqual(INVALID)
    }
    expect(await storedBatches(t)).toBe(before)
  })

  test('answers 403 to a batch signed more than 300 s before or after now, so that a captured post cannot be replayed', async ({
    t,
  }) => {
    const before = await storedBatches(t)
    const body = batch()
    for (const offset of [-360, 360, -86_400]) {
      const headers = signedEventHeaders(privateKey, body, String(nowSeconds() + offset))
      const response = await post(t.app, body, headers)
      expect(response.statusCode, `signed ${offset} s from now`).toBe(403)
      expect(response.json()).toEqual(INVALID)
    }
    for (const timestamp of ['', 'yesterday', `${nowSeconds()}.5`]) {
      const response = await post(t.app, body, signedEventHeaders(privateKey, body, timestamp))
      expect(response.statusCode, `timestamp "${timestamp}"`).toBe(403)
    }
    expect(await storedBatches(t)).toBe(before)
    // Within the window either way, as with clocks a little apart.
    for (const offset of [-240, 240]) {
      const fresh = batch()
      const headers = signedEventHeaders(privateKey, fresh, String(nowSeconds() + offset))
      expect((await post(t.app, fresh, headers)).statusCode, `signed ${offset} s from now`).toBe(200)
    }
    expect(await storedBatches(t)).toBe(before + 2)
  })

  test('reads the key as base64 DER or PEM, and refuses at start one that is not P-256 or no key at all', () => {
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString()
    expect(parseWebhookPublicKey(pem).equals(publicKey)).toBe(true)
    expect(parseWebhookPublicKey(publicKeyBase64).equals(publicKey)).toBe(true)
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey
    for (const wrong of [rsa.export({ format: 'pem', type: 'spki' }).toString(), 'not a key']) {
      expect(() => parseWebhookPublicKey(wrong)).toThrow(
        new ConfigError('SENDGRID_WEBHOOK_PUBLIC_KEY must be an ECDSA P-256 public key (base64 DER or PEM)'),
      )
    }
  })
})

describe('the event webhook in production', () => {
  /** Production as tests run it: behind a TLS proxy on this host, which the webhook requires. */
  const production = { ...PRODUCTION_ENV, TRUST_PROXY: '127.0.0.1', LOG_LEVEL: 'silent' }
  let signedOnly: TestApp

  beforeAll(async () => {
    signedOnly = await buildTestApp(production)
  })
  afterAll(() => signedOnly?.close())

  it('refuses to start on SendGrid without SENDGRID_WEBHOOK_PUBLIC_KEY, naming it and the setting that accepts unsigned events', async () => {
    const { SENDGRID_WEBHOOK_PUBLIC_KEY: _key, ...unsigned } = production
    await expect(buildTestApp({ ...unsigned, MAIL_PROVIDER: 'sendgrid' })).rejects.toThrow(
      new ConfigError(
        'NODE_ENV=production needs these set: SENDGRID_WEBHOOK_PUBLIC_KEY (or SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true to accept unsigned events)',
      ),
    )
  })

  it('starts without the key when SendGrid sends no mail (the outbox), and refuses every batch, signed or not', async () => {
    const { SENDGRID_WEBHOOK_PUBLIC_KEY: _key, ...unsigned } = production
    const outbox = await buildTestApp(unsigned)
    try {
      const app = behindTlsProxy(outbox.app)
      const body = batch()
      for (const headers of [{}, signedEventHeaders(PRODUCTION_EVENT_KEYS.privateKey, body)]) {
        const response = await post(app, body, headers)
        expect(response.statusCode).toBe(403)
        expect(response.json()).toEqual(INVALID)
      }
      expect(await storedBatches(outbox)).toBe(0)
    } finally {
      await outbox.close()
    }
  })

  it('refuses an unsigned batch, and stores a signed one', async () => {
    const app = behindTlsProxy(signedOnly.app)
    const body = batch()
    const unsigned = await post(app, body, {})
    expect(unsigned.statusCode).toBe(403)
    expect(unsigned.json()).toEqual(INVALID)
    expect(await storedBatches(signedOnly)).toBe(0)
    const signed = await post(app, body, signedEventHeaders(PRODUCTION_EVENT_KEYS.privateKey, body))
    expect(signed.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(await storedBatches(signedOnly)).toBe(1)
  })

  it('accepts unsigned batches when SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true says so, warning at start', async () => {
    const { SENDGRID_WEBHOOK_PUBLIC_KEY: _key, ...unsigned } = production
    const logs = captureLogs()
    const unsafe = await buildTestApp(
      { ...unsigned, SENDGRID_WEBHOOK_UNSIGNED_UNSAFE: 'true', LOG_LEVEL: 'warn' },
      { logStream: logs.stream },
    )
    try {
      const response = await post(behindTlsProxy(unsafe.app), batch(), {})
      expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
      expect(logs.lines.map((line) => line.msg)).toContain(
        'SENDGRID_WEBHOOK_UNSIGNED_UNSAFE=true: delivery events are accepted unsigned, from anyone who posts them',
      )
    } finally {
      await unsafe.close()
    }
  })
})
