import { generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'
import { and, count, desc, eq, isNull } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { newId } from '../../platform/db/ids.js'
import { DND_REASONS, ORIGINAL_EVENT_FIELD, processEventBatch } from './delivery-events.service.js'
import { communicationEvents, communications, MODULE_TAGS, mailEventBatches } from './tables.js'
import { parseWebhookPublicKey } from './webhook-signature.js'

const WEBHOOK = '/mailprovider/webhook'
const hex = (bytes: number) => randomBytes(bytes).toString('hex')

/** A SendGrid event for the message `msgId`, as SendGrid posts it (`sg_message_id` = msgID + filter suffix). */
function sgEvent(msgId: string | undefined, fields: Record<string, unknown> = {}) {
  return {
    email: 'recipient@example.com',
    timestamp: 1_700_000_000,
    event: 'delivered',
    sg_event_id: `ev-${hex(8)}`,
    ...(msgId && { sg_message_id: `${msgId}.filterdrecv-5645d9c87f-78xgx-1-64F9A3B1-2.0` }),
    'smtp-id': '<14c5d75ce93.dfd.64b469@ismtpd-555>',
    category: ['newsletter'],
    ...fields,
  }
}

describe('email delivery events webhook', () => {
  let t: TestApp
  let owner: Tenant
  let stranger: Tenant
  beforeAll(async () => {
    t = await buildTestApp({ MAIL_PROVIDER: 'sendgrid', SENDGRID_API_KEY: 'SG.parent-key' })
    owner = await createTenant(t.app)
    stranger = await createTenant(t.app)
  })
  afterAll(() => t.close())

  const db = () => t.database.handle.db
  const post = (payload: unknown, prefix = '/v1/e') =>
    t.app.inject({
      method: 'POST',
      url: `${prefix}${WEBHOOK}`,
      headers: { 'content-type': 'application/json' },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    })

  /** A sent email of the account, as the send route stores it. */
  async function sentEmail(accountId: string) {
    const msgId = hex(11)
    const [row] = await db()
      .insert(communications)
      .values({ accountId, type: 'OUTGOING', module: MODULE_TAGS.sendgrid, msgId, success: true })
      .returning({ id: communications.id })
    return { id: (row as { id: string }).id, msgId }
  }

  async function batchCount() {
    const [row] = await db().select({ n: count() }).from(mailEventBatches)
    return row?.n ?? 0
  }

  /** Waits until the job has processed every stored batch. */
  async function processed() {
    await vi.waitFor(
      async () => {
        const [row] = await db()
          .select({ n: count() })
          .from(mailEventBatches)
          .where(isNull(mailEventBatches.processedAt))
        expect(row?.n).toBe(0)
      },
      { timeout: 15_000, interval: 100 },
    )
  }

  const eventsOf = (accountId: string, sgEventId: string) =>
    db()
      .select()
      .from(communicationEvents)
      .where(and(eq(communicationEvents.accountId, accountId), eq(communicationEvents.sgEventId, sgEventId)))

  /** The record's delivery status as the read API shows it. */
  async function statusOf(communicationId: string) {
    const response = await t.app.inject({
      url: `/v1/e/mailprovider/communications/${communicationId}`,
      headers: owner.headers,
    })
    return response.json().data.delivery_status
  }

  async function dndOf(tenant: Tenant) {
    const response = await t.app.inject({ url: '/v1/e/mailprovider/dnd?limit=100', headers: tenant.headers })
    return response.json().data as { value: string; type: string; reason: string }[]
  }

  it('answers 200 under both prefixes once the raw batch is stored, and the job processes it', async () => {
    for (const prefix of ['/v1/e', '/v1/integrations']) {
      const batch = [sgEvent(undefined, { account_id: owner.accountId })]
      const response = await post(batch, prefix)
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
      const stored = await db().select().from(mailEventBatches)
      expect(stored.map((b) => b.payload)).toContainEqual(batch)
    }
    await processed()
  })

  it('accepts a batch larger than the service-wide 1 MB body limit', async () => {
    const batch = Array.from({ length: 5_000 }, () => sgEvent(hex(11), { useragent: 'x'.repeat(200) }))
    const body = JSON.stringify(batch)
    expect(body.length).toBeGreaterThan(1_500_000)
    expect((await post(body)).statusCode).toBe(200)
    await processed()
  })

  it('appends each event to the record of its message id (the text before the dot), with the spec fields', async () => {
    const email = await sentEmail(owner.accountId)
    const other = await sentEmail(owner.accountId)
    const click = sgEvent(email.msgId, {
      event: 'click',
      email: 'ada@example.com',
      timestamp: 1_700_000_100,
      account_id: owner.accountId,
      uid: owner.userId,
      useragent: 'Mozilla/5.0',
      ip: '203.0.113.7',
      url: 'https://example.com/offer',
    })
    const delivered = sgEvent(email.msgId, { timestamp: 1_700_000_050 })
    expect((await post([click, delivered])).statusCode).toBe(200)
    await processed()

    expect(await eventsOf(owner.accountId, click.sg_event_id)).toEqual([
      {
        accountId: owner.accountId,
        communicationId: email.id,
        sgEventId: click.sg_event_id,
        event: 'click',
        email: 'ada@example.com',
        timestamp: 1_700_000_100,
        sgMessageId: click.sg_message_id,
        uid: owner.userId,
        useragent: 'Mozilla/5.0',
        ip: '203.0.113.7',
        url: 'https://example.com/offer',
        bounceType: null,
        createdAt: expect.any(Date),
      },
    ])
    const [deliveredRow] = await eventsOf(owner.accountId, delivered.sg_event_id)
    expect(deliveredRow).toMatchObject({
      communicationId: email.id,
      event: 'delivered',
      uid: null,
      url: null,
    })
    expect(await statusOf(email.id)).toBe('click')
    expect(await statusOf(other.id)).toBe(null)
  })

  it('stores each event once when a batch is posted twice, and when it is posted twice at once', async () => {
    const email = await sentEmail(owner.accountId)
    const batch = [
      sgEvent(email.msgId, { timestamp: 1_700_000_000 }),
      sgEvent(email.msgId, { event: 'open', timestamp: 1_700_000_010 }),
      sgEvent(email.msgId, { event: 'unsubscribe', email: 'twice@example.com', timestamp: 1_700_000_020 }),
    ]
    expect((await post(batch)).statusCode).toBe(200)
    expect((await post(batch)).statusCode).toBe(200)
    const together = await Promise.all([post(batch), post(batch, '/v1/integrations')])
    expect(together.map((r) => r.statusCode)).toEqual([200, 200])
    await processed()

    for (const event of batch) expect(await eventsOf(owner.accountId, event.sg_event_id)).toHaveLength(1)
    const rows = await db()
      .select({ n: count() })
      .from(communicationEvents)
      .where(
        and(
          eq(communicationEvents.accountId, owner.accountId),
          eq(communicationEvents.communicationId, email.id),
        ),
      )
    expect(rows[0]?.n).toBe(3)
    expect((await dndOf(owner)).filter((e) => e.value === 'twice@example.com')).toHaveLength(1)
  })

  it('applies an event once when two runs process copies of its batch at the same moment', async () => {
    const email = await sentEmail(owner.accountId)
    const batch = Array.from({ length: 50 }, (_, n) =>
      sgEvent(email.msgId, { event: 'open', timestamp: 1_700_000_000 + n }),
    )
    // Stored without a job, so that the two runs below are the only ones and truly overlap.
    const copies = await db()
      .insert(mailEventBatches)
      .values([{ payload: batch }, { payload: batch }])
      .returning({ id: mailEventBatches.id })
    await Promise.all(copies.map((copy) => processEventBatch({ ...t.app.platform, db: db() }, copy.id)))

    const stored = await db()
      .select({ sgEventId: communicationEvents.sgEventId })
      .from(communicationEvents)
      .where(
        and(
          eq(communicationEvents.accountId, owner.accountId),
          eq(communicationEvents.communicationId, email.id),
        ),
      )
    expect(stored.map((e) => e.sgEventId).sort()).toEqual(batch.map((e) => e.sg_event_id).sort())
    expect(await statusOf(email.id)).toBe('open')
    await processed()
  })

  it('keeps the newest status when events arrive out of order, and ranks events of the same second', async () => {
    const email = await sentEmail(owner.accountId)
    await post([sgEvent(email.msgId, { event: 'open', timestamp: 1_700_000_200 })])
    await processed()
    await post([
      sgEvent(email.msgId, { event: 'delivered', timestamp: 1_700_000_100 }),
      sgEvent(email.msgId, { event: 'processed', timestamp: 1_700_000_050 }),
    ])
    await processed()
    expect(await statusOf(email.id)).toBe('open')
    // Same second: `delivered` ranks below `open`, so it does not replace it.
    await post([sgEvent(email.msgId, { event: 'delivered', timestamp: 1_700_000_200 })])
    await processed()
    expect(await statusOf(email.id)).toBe('open')

    // Within one batch too, whatever the order: the click at the same second outranks the open.
    const second = await sentEmail(owner.accountId)
    await post([
      sgEvent(second.msgId, { event: 'click', timestamp: 1_700_000_300 }),
      sgEvent(second.msgId, { event: 'open', timestamp: 1_700_000_300 }),
      sgEvent(second.msgId, { event: 'delivered', timestamp: 1_700_000_290 }),
    ])
    await processed()
    expect(await statusOf(second.id)).toBe('click')
    await post([sgEvent(second.msgId, { event: 'bounce', type: 'blocked', timestamp: 1_700_000_400 })])
    await processed()
    expect(await statusOf(second.id)).toBe('bounce')
  })

  it('lists unsubscribes, spam reports and hard bounces permanently, but not soft bounces', async () => {
    const tenant = await createTenant(t.app)
    const email = await sentEmail(tenant.accountId)
    await post([
      sgEvent(email.msgId, { event: 'unsubscribe', email: 'leaver@example.com' }),
      sgEvent(email.msgId, { event: 'spamreport', email: 'annoyed@example.com' }),
      sgEvent(email.msgId, { event: 'bounce', type: 'bounce', email: 'gone@example.com' }),
      sgEvent(email.msgId, { event: 'bounce', type: 'blocked', email: 'full-mailbox@example.com' }),
      sgEvent(email.msgId, { event: 'open', email: 'reader@example.com' }),
    ])
    await processed()
    const entries = (await dndOf(tenant)).map(({ value, type, reason }) => ({ value, type, reason }))
    expect(entries).toHaveLength(3)
    expect(entries).toEqual(
      expect.arrayContaining([
        { value: 'leaver@example.com', type: 'permanent', reason: DND_REASONS.unsubscribe },
        { value: 'annoyed@example.com', type: 'permanent', reason: DND_REASONS.spamreport },
        { value: 'gone@example.com', type: 'permanent', reason: DND_REASONS.hardBounce },
      ]),
    )
    expect(DND_REASONS).toEqual({
      unsubscribe: 'Unsubscribed through the email provider webhook',
      spamreport: 'Reported as spam through the email provider webhook',
      hardBounce: 'Hard bounce reported by the email provider',
    })
  })

  it("puts an event of another account's record on that account only, whatever its custom args say", async () => {
    const theirs = await sentEmail(stranger.accountId)
    const event = sgEvent(theirs.msgId, {
      event: 'unsubscribe',
      email: 'their-customer@example.com',
      account_id: owner.accountId,
    })
    await post([event])
    await processed()
    expect(await eventsOf(stranger.accountId, event.sg_event_id)).toMatchObject([
      { communicationId: theirs.id },
    ])
    expect(await eventsOf(owner.accountId, event.sg_event_id)).toEqual([])
    expect((await dndOf(stranger)).map((e) => e.value)).toContain('their-customer@example.com')
    expect((await dndOf(owner)).map((e) => e.value)).not.toContain('their-customer@example.com')
  })

  it('keeps an event of an unknown message for the account in its custom args, and drops it without one', async () => {
    const tenant = await createTenant(t.app)
    const kept = sgEvent(undefined, {
      event: 'bounce',
      type: 'bounce',
      email: 'async-bounce@example.com',
      account_id: tenant.accountId,
    })
    const unknownMessage = sgEvent(hex(11), { account_id: tenant.accountId })
    const noAccount = sgEvent(hex(11))
    const badAccount = sgEvent(undefined, { account_id: 'not-an-account' })
    await post([kept, unknownMessage, noAccount, badAccount])
    await processed()
    expect(await eventsOf(tenant.accountId, kept.sg_event_id)).toMatchObject([
      { communicationId: null, event: 'bounce', email: 'async-bounce@example.com' },
    ])
    expect(await eventsOf(tenant.accountId, unknownMessage.sg_event_id)).toMatchObject([
      { communicationId: null, sgMessageId: unknownMessage.sg_message_id },
    ])
    for (const dropped of [noAccount, badAccount]) {
      const rows = await db()
        .select()
        .from(communicationEvents)
        .where(eq(communicationEvents.sgEventId, dropped.sg_event_id))
      expect(rows).toEqual([])
    }
    expect((await dndOf(tenant)).map((e) => e.value)).toEqual(['async-bounce@example.com'])
  })

  it('skips events without an id, a name or a timestamp, and reads ids and timestamps given as other types', async () => {
    const email = await sentEmail(owner.accountId)
    const usable = [
      sgEvent(email.msgId, { sg_event_id: 4_242_001, timestamp: '1700000500' }),
      sgEvent(email.msgId, { event: 'open', timestamp: 1_700_000_400, useragent: { nested: true } }),
    ]
    const unusable = [
      sgEvent(email.msgId, { sg_event_id: '' }),
      sgEvent(email.msgId, { event: null }),
      sgEvent(email.msgId, { timestamp: -5 }),
      sgEvent(email.msgId, { timestamp: '17 o clock' }),
    ]
    expect((await post([...usable, ...unusable])).statusCode).toBe(200)
    await processed()
    expect(await eventsOf(owner.accountId, '4242001')).toMatchObject([
      { communicationId: email.id, timestamp: 1_700_000_500, event: 'delivered' },
    ])
    expect(await eventsOf(owner.accountId, usable[1]?.sg_event_id as string)).toMatchObject([
      { event: 'open', useragent: null },
    ])
    for (const event of unusable.slice(1)) {
      expect(await eventsOf(owner.accountId, event.sg_event_id as string)).toEqual([])
    }
    expect(await statusOf(email.id)).toBe('delivered')
  })

  it('answers 200 to any post, as the spec has it, and stores only a JSON array holding events', async () => {
    const before = await batchCount()
    const notJson = await post('[{"event": "delivered",')
    expect(notJson.statusCode).toBe(200)
    expect(notJson.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect((await post({ event: 'delivered', sg_event_id: 'x' })).statusCode).toBe(200)
    expect((await post([1, 2])).statusCode).toBe(200)
    expect((await post([])).statusCode).toBe(200)
    const asText = await t.app.inject({
      method: 'POST',
      url: `/v1/e${WEBHOOK}`,
      headers: { 'content-type': 'text/plain' },
      payload: 'hello',
    })
    expect(asText.statusCode).toBe(200)
    expect(await batchCount()).toBe(before)
  })

  it('answers 200 to a batch holding characters PostgreSQL cannot store, and keeps every event of it', async () => {
    const email = await sentEmail(owner.accountId)
    const good = sgEvent(email.msgId, { event: 'delivered', timestamp: 1_700_000_600 })
    const odd = sgEvent(email.msgId, {
      event: 'open',
      timestamp: 1_700_000_700,
      email: 'nul\u0000@example.com',
      useragent: 'lone \ud800 surrogate',
      'key\u0000': 'value',
    })
    const notAnEvent = 'text\u0000'
    const response = await post([good, odd, notAnEvent])
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    await processed()

    expect(await eventsOf(owner.accountId, good.sg_event_id)).toMatchObject([{ event: 'delivered' }])
    expect(await eventsOf(owner.accountId, odd.sg_event_id)).toMatchObject([
      { event: 'open', email: 'nul\ufffd@example.com', useragent: 'lone \ufffd surrogate' },
    ])
    expect(await statusOf(email.id)).toBe('open')
    // Nothing acknowledged is lost: the batch keeps each unstorable element's exact text as posted.
    const [batch] = await db().select().from(mailEventBatches).orderBy(desc(mailEventBatches.id)).limit(1)
    const [storedGood, storedOdd, storedText] = (batch?.payload ?? []) as Record<string, string>[]
    expect(storedGood).toEqual(good)
    expect(JSON.parse(storedOdd?.[ORIGINAL_EVENT_FIELD] as string)).toEqual(odd)
    expect(JSON.parse(storedText?.[ORIGINAL_EVENT_FIELD] as string)).toBe(notAnEvent)
  })

  it('reads a batch posted with a byte-order mark before its JSON', async () => {
    const tenant = await createTenant(t.app)
    const event = sgEvent(undefined, { account_id: tenant.accountId })
    expect((await post(`\ufeff${JSON.stringify([event])}`)).statusCode).toBe(200)
    await processed()
    expect(await eventsOf(tenant.accountId, event.sg_event_id)).toHaveLength(1)
  })

  it('answers 503 when the batch cannot be stored, so that SendGrid redelivers it', async () => {
    await processed()
    const before = await batchCount()
    await db().execute('alter table mail_event_batches rename to mail_event_batches_away')
    try {
      const response = await post([sgEvent(undefined, { account_id: owner.accountId })])
      expect(response.statusCode).toBe(503)
      expect(response.json()).toMatchObject({ success: false, errno: 503 })
    } finally {
      await db().execute('alter table mail_event_batches_away rename to mail_event_batches')
    }
    expect(await batchCount()).toBe(before)
  })
})

describe('signed event webhook', () => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  // As SendGrid shows the verification key: base64 of the DER (SPKI) encoding.
  const publicKeyBase64 = publicKey.export({ format: 'der', type: 'spki' }).toString('base64')
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ SENDGRID_WEBHOOK_PUBLIC_KEY: publicKeyBase64 })
  })
  afterAll(() => t.close())

  const signature = (key: KeyObject, timestamp: string, body: string) =>
    sign('sha256', Buffer.from(timestamp + body), key).toString('base64')

  const post = (body: string, headers: Record<string, string>) =>
    t.app.inject({
      method: 'POST',
      url: `/v1/integrations${WEBHOOK}`,
      headers: { 'content-type': 'application/json', ...headers },
      payload: body,
    })

  const storedBatches = async () => (await t.database.handle.db.select().from(mailEventBatches)).length

  it('accepts a batch signed with the configured key', async () => {
    const body = JSON.stringify([sgEvent(undefined, { account_id: newId() })])
    const timestamp = String(Math.floor(Date.now() / 1000))
    const response = await post(body, {
      'X-Twilio-Email-Event-Webhook-Signature': signature(privateKey, timestamp, body),
      'X-Twilio-Email-Event-Webhook-Timestamp': timestamp,
    })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(await storedBatches()).toBe(1)
  })

  it('answers 403 and stores nothing when the signature is missing, wrong or for other bytes', async () => {
    const body = JSON.stringify([sgEvent(undefined, { account_id: newId() })])
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
    const before = await storedBatches()
    for (const headers of attempts) {
      const response = await post(body, headers)
      expect(response.statusCode, JSON.stringify(Object.keys(headers))).toBe(403)
      expect(response.json()).toEqual({ success: false, errno: 403, message: 'Invalid webhook signature' })
    }
    expect(await storedBatches()).toBe(before)
  })

  it('reads the key as base64 DER or PEM, and refuses a key that is not P-256', () => {
    const pem = publicKey.export({ format: 'pem', type: 'spki' }).toString()
    expect(parseWebhookPublicKey(pem).equals(publicKey)).toBe(true)
    expect(parseWebhookPublicKey(publicKeyBase64).equals(publicKey)).toBe(true)
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey
    expect(() => parseWebhookPublicKey(rsa.export({ format: 'pem', type: 'spki' }).toString())).toThrow(
      'P-256',
    )
  })
})
