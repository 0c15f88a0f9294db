import { describe, expect, it, vi } from 'vitest'
import type { FakeSendgrid } from '../../../test/fakes/sendgrid.js'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { postInbound, replyForm } from '../../../test/helpers/inbound-email.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { NAME_MAX_LENGTH, SUBJECT_MAX_LENGTH } from '../../platform/http/schemas.js'
import { creditEntriesFor } from '../accounts/credits.service.js'
import { messageIdOf } from './sendgrid.js'
import { emailSendKeys } from './tables.js'

const PARENT_KEY = 'SG.parent-key'
const SUBUSER_KEY = 'SG.subuser-key'
const URL_PATH = '/v1/e/mailprovider/mail'

test.override('sendgridOptions', {
  apiKeys: [PARENT_KEY, SUBUSER_KEY],
  messageIdSuffix: '.filter0001.16648.5515E0B88.0',
})
test.override('appEnv', ({ sendgrid, socketService }) => ({
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: PARENT_KEY,
  SENDGRID_BASE_URL: sendgrid.url,
  CONVERSATION_SOCKET_URL: socketService.url,
}))

const message = (overrides: Record<string, unknown> = {}) => ({
  subject: 'Hello {{contact.name}}',
  sender: { email: 'agency@example.com', name: 'Agency' },
  recipients: [{ email: 'lead@example.com', name: 'Lead' }],
  content: [
    { type: 'text/html', value: '<p>Dear {{contact.name}} from {{business.name}}</p>' },
    { type: 'text/plain', value: 'Dear {{contact.name}}' },
  ],
  origin: 'campaign',
  fallback_values: '{"business.name":"our <shop>"}',
  ...overrides,
})

describe('send email through SendGrid', () => {
  let contactId: string

  const admin = (t: TestApp, method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v1/admin${url}`, headers: adminHeaders, payload })
  const balance = async (t: TestApp, accountId: string) =>
    (await admin(t, 'GET', `/accounts/${accountId}/credits`)).json().data.balance
  const send = (t: TestApp, who: Tenant, payload: object, url = URL_PATH) =>
    t.app.inject({ method: 'POST', url, headers: who.headers, payload })
  const mailCount = (sendgrid: FakeSendgrid) => sendgrid.messages.size

  test.beforeAll(async ({ t, owner: tenant }) => {
    await admin(t, 'POST', `/accounts/${tenant.accountId}/credits`, { amount: 100 })
    const contact = await admin(t, 'POST', `/accounts/${tenant.accountId}/contacts`, {
      email: 'Lead@Example.com',
      name: 'Lea',
    })
    contactId = contact.json().data._id
  })

  test('sends, records the communication, charges per recipient and threads the contact', async ({
    t,
    socketService,
    owner: tenant,
    sendgrid,
  }) => {
    const before = await balance(t, tenant.accountId)
    const response = await send(
      t,
      tenant,
      message({
        cc: [{ email: 'cc@example.com', name: 'Lima, Ana' }],
        recipients: [{ email: 'lead@example.com', name: 'Lead' }, { email: 'other@example.com' }],
      }),
    )
    expect(response.statusCode).toBe(200)
    const record = response.json().data
    expect(response.json()).toMatchObject({ success: true, message: 'SUCCESS' })
    expect(record).toMatchObject({
      type: 'OUTGOING',
      module: 'SENDGRID',
      message_type: 'EMAIL',
      origin: 'campaign',
      account_id: tenant.accountId,
      success: true,
      contact_id: [contactId],
      attachments: [],
      events: [],
    })
    const [sent] = [...sendgrid.messages.values()]
    expect(record.msgID).toBe(sent?.messageId)
    expect(record.msgID).not.toContain('.')
    expect(record.headers['x-message-id']).toBe(sent?.xMessageId)
    expect(sent?.apiKey).toBe(PARENT_KEY)

    const body = sent?.body
    expect(body?.personalizations[0]?.custom_args).toEqual({
      account_id: tenant.accountId,
      uid: tenant.userId,
      origin: 'campaign',
      communication_id: record._id,
    })
    expect(body?.headers).toEqual({
      'X-Account-ID': tenant.accountId,
      'X-User-ID': tenant.userId,
      'X-Email-Origin': 'campaign',
    })
    expect(body?.personalizations[0]?.cc).toEqual([{ email: 'cc@example.com', name: 'Lima Ana' }])
    expect(body?.subject).toBe('Hello Lea')
    expect(body?.content).toEqual([
      { type: 'text/plain', value: 'Dear Lea' },
      { type: 'text/html', value: '<p>Dear Lea from our &lt;shop&gt;</p>' },
    ])
    expect(record.body).toEqual(body)

    expect(await balance(t, tenant.accountId)).toBe(before - 2)
    // Rule 12: one credit record of event `email` for the two recipients (not cc), naming the record.
    const charges = await creditEntriesFor(t.app.platform.db, tenant.accountId, record._id)
    expect(charges).toEqual([{ event: 'email', quantity: -2 }])
    expect(record.conversation_id).toHaveLength(1)
    await vi.waitFor(
      () => {
        expect(socketService.emitted()).toContainEqual(
          expect.objectContaining({ event: 'new', data: { conversation_id: record.conversation_id[0] } }),
        )
        expect(socketService.emitted()).toContainEqual(
          expect.objectContaining({ event: 'message', data: { communication_id: record._id } }),
        )
      },
      { timeout: 10_000, interval: 100 },
    )
  })

  test('keeps one open prospect thread per contact and counts the sender unread messages', async ({
    t,
    owner: tenant,
  }) => {
    const first = (await send(t, tenant, message())).json().data
    const second = (await send(t, tenant, message(), '/v1/integrations/mailprovider/mail')).json().data
    expect(second.conversation_id).toEqual(first.conversation_id)
    const { getProspectConversation } = await import('../accounts/prospect-conversations.service.js')
    const thread = await getProspectConversation(
      t.app.platform.db,
      tenant.accountId,
      first.conversation_id[0],
    )
    expect(thread).toMatchObject({ channel: 'prospect', title: 'Lea', is_open: true })
    expect(thread.members.find((m) => m.user_id === tenant.userId)?.unread_count).toBeGreaterThanOrEqual(2)
  })

  // Every free-text field the send stores is bounded, the subject by RFC 5322's line.
  test('refuses a subject or a sender name past its bound, naming the field, and sends nothing', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const before = mailCount(sendgrid)
    const tooLong = [
      [message({ subject: 'x'.repeat(SUBJECT_MAX_LENGTH + 1) }), 'subject', SUBJECT_MAX_LENGTH],
      [
        message({ sender: { email: 'a@example.com', name: 'x'.repeat(NAME_MAX_LENGTH + 1) } }),
        'sender.name',
        NAME_MAX_LENGTH,
      ],
    ] as const
    for (const [payload, field, maxLength] of tooLong) {
      const response = await send(t, tenant, payload)
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe(`${field} must be at most ${maxLength} characters long`)
    }
    expect(mailCount(sendgrid)).toBe(before)
  })

  test('refuses recipients on the do-not-disturb list, charging and sending nothing', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/dnd',
      headers: tenant.headers,
      payload: { value: 'blocked@example.com' },
    })
    const before = [await balance(t, tenant.accountId), mailCount(sendgrid)]
    const response = await send(t, tenant, message({ bcc: [{ email: 'Blocked@example.com' }] }))
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({
      success: false,
      errno: 400,
      message: 'DND enabled for received email(s).',
    })
    expect([await balance(t, tenant.accountId), mailCount(sendgrid)]).toEqual(before)
  })

  test('refuses an insufficient balance with what was required and available', async ({ t }) => {
    const poor = await createTenant(t.app)
    await admin(t, 'POST', `/accounts/${poor.accountId}/credits`, { amount: 1 })
    const response = await send(
      t,
      poor,
      message({ recipients: [{ email: 'a@example.com' }, { email: 'b@example.com' }] }),
    )
    expect(response.json()).toEqual({
      success: false,
      errno: 400,
      message: 'Insufficient balance',
      additional_info: { required: 2, available: 1 },
    })
  })

  test('validates the request with the spec messages', async ({ t, owner: tenant }) => {
    const none = await send(t, tenant, message({ recipients: [] }))
    expect(none.json()).toMatchObject({ errno: 400, message: 'recipients must contain at least 1 items' })
    expect((await send(t, tenant, message({ content: undefined }))).json().message).toBe(
      'content is required when template_id is absent',
    )
    expect((await send(t, tenant, message({ template_id: 'd-123' }))).json().message).toBe(
      'dynamic_template_data is required when template_id is present',
    )
    expect((await send(t, tenant, message({ fallback_values: '{oops' }))).json().message).toBe(
      'fallback_values must be a JSON object',
    )
    expect((await send(t, tenant, message({ sender: { email: 'nope' } }))).json().message).toBe(
      'sender.email must be a valid email',
    )
  })

  test('sends a dynamic template without content', async ({ t, owner: tenant, sendgrid }) => {
    const response = await send(
      t,
      tenant,
      message({ template_id: 'd-welcome', dynamic_template_data: { first: 'Lea' } }),
    )
    expect(response.statusCode).toBe(200)
    const sent = sendgrid.messages.get(response.json().data.msgID)
    expect(sent?.body.template_id).toBe('d-welcome')
    expect(sent?.body.content).toBeUndefined()
    expect(sent?.body.personalizations[0]?.dynamic_template_data).toEqual({ first: 'Lea' })
  })

  test('releases the reservation and answers 502 naming the provider error when SendGrid fails', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const before = await balance(t, tenant.accountId)
    sendgrid.failNext(500, 3)
    const response = await send(t, tenant, message())
    expect(response.statusCode).toBe(502)
    expect(response.json().message).toMatch(/^SendGrid refused the email: /)
    expect(await balance(t, tenant.accountId)).toBe(before)
  })

  test('sends with the account subuser key once one is set', async ({ t, sendgrid }) => {
    const agency = await createTenant(t.app)
    await admin(t, 'POST', `/accounts/${agency.accountId}/credits`, { amount: 5 })
    const set = await admin(t, 'PUT', `/accounts/${agency.accountId}/mail-subuser`, {
      username: 'agency-1',
      api_key: SUBUSER_KEY,
    })
    expect(set.json().data).toMatchObject({
      account_id: agency.accountId,
      username: 'agency-1',
      api_key_set: true,
    })
    expect(set.body).not.toContain(SUBUSER_KEY)
    const response = await send(t, agency, message())
    expect(sendgrid.messages.get(response.json().data.msgID)?.apiKey).toBe(SUBUSER_KEY)
  })

  test('sends multipart requests with attachments stored and base64-encoded for the provider', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const form = new FormData()
    const fields = message()
    for (const [name, value] of Object.entries(fields))
      form.append(name, typeof value === 'string' ? value : JSON.stringify(value))
    form.append(
      'attachments',
      new Blob([Buffer.from('%PDF-1.4 quote')], { type: 'application/pdf' }),
      'quote.pdf',
    )
    const request = new Request('http://localhost', { method: 'POST', body: form })
    const response = await t.app.inject({
      method: 'POST',
      url: URL_PATH,
      headers: { ...tenant.headers, 'content-type': request.headers.get('content-type') as string },
      payload: Buffer.from(await request.arrayBuffer()),
    })
    expect(response.statusCode).toBe(200)
    const record = response.json().data
    expect(record.attachments).toEqual([
      expect.objectContaining({ file_name: 'quote.pdf', type: 'application/pdf', size: 14, bucket: 'local' }),
    ])
    const stored = await t.app.platform.storage.get(record.attachments[0].key)
    expect(stored?.toString()).toBe('%PDF-1.4 quote')
    const sent = sendgrid.messages.get(record.msgID)
    expect(sent?.body.attachments).toEqual([
      {
        content: Buffer.from('%PDF-1.4 quote').toString('base64'),
        filename: 'quote.pdf',
        type: 'application/pdf',
        disposition: 'attachment',
      },
    ])
    expect(record.body.attachments).toEqual([])
  })

  test('refuses an attachment over 2 MB, more than 12, and more than SendGrid takes once encoded', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const post = async (files: Blob[]) => {
      const form = new FormData()
      for (const [name, value] of Object.entries(message()))
        form.append(name, typeof value === 'string' ? value : JSON.stringify(value))
      for (const [i, file] of files.entries()) form.append('attachments', file, `f${i}.txt`)
      const request = new Request('http://localhost', { method: 'POST', body: form })
      return t.app.inject({
        method: 'POST',
        url: URL_PATH,
        headers: { ...tenant.headers, 'content-type': request.headers.get('content-type') as string },
        payload: Buffer.from(await request.arrayBuffer()),
      })
    }
    const before = [await balance(t, tenant.accountId), mailCount(sendgrid)]
    const big = await post([new Blob([Buffer.alloc(2 * 1024 * 1024 + 1)])])
    expect(big.json()).toMatchObject({ errno: 400, message: 'attachments[0] must be at most 2 MB' })
    const many = await post(Array.from({ length: 13 }, () => new Blob(['x'])))
    expect(many.json()).toMatchObject({ errno: 400, message: 'attachments must contain at most 12 files' })
    // Twelve files of 2 MB are allowed one by one, but 32 MB once base64-encoded: over SendGrid's 30 MB.
    const twoMegabytes = new Blob([Buffer.alloc(2 * 1024 * 1024)])
    const heavy = await post(Array.from({ length: 12 }, () => twoMegabytes))
    expect(heavy.json()).toMatchObject({
      errno: 400,
      message: 'attachments exceed the 30 MB message limit of the email provider once encoded',
    })
    expect([await balance(t, tenant.accountId), mailCount(sendgrid)]).toEqual(before)
  })

  test('sends once per Idempotency-Key: a retry gets the first record back, uncharged', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const keyed = (key: string, who: Tenant = tenant) =>
      t.app.inject({
        method: 'POST',
        url: URL_PATH,
        headers: { ...who.headers, 'idempotency-key': key },
        payload: message(),
      })
    const before = [await balance(t, tenant.accountId), mailCount(sendgrid)]
    const first = await keyed('order-1001-receipt')
    expect(first.statusCode).toBe(200)
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    const retry = await keyed('order-1001-receipt')
    expect(retry.statusCode).toBe(200)
    expect(retry.headers['idempotent-replayed']).toBe('true')
    expect(retry.json().data._id).toBe(first.json().data._id)
    expect([await balance(t, tenant.accountId), mailCount(sendgrid)]).toEqual([before[0] - 1, before[1] + 1])

    // At the same moment: one sends, the other gets the record or a 409, never a second email.
    const racing = await Promise.all([keyed('order-1002'), keyed('order-1002')])
    expect(racing.map((r) => r.statusCode).sort()).toSatisfy(
      (codes: number[]) => codes[0] === 200 && [200, 409].includes(codes[1] as number),
    )
    expect(mailCount(sendgrid)).toBe(before[1] + 2)

    // A failed send gives the key up; the same key in another account is another send.
    sendgrid.failNext(500, 3)
    expect((await keyed('order-1003')).statusCode).toBe(502)
    expect((await keyed('order-1003')).statusCode).toBe(200)
    const other = await createTenant(t.app)
    await admin(t, 'POST', `/accounts/${other.accountId}/credits`, { amount: 1 })
    const elsewhere = await keyed('order-1001-receipt', other)
    expect(elsewhere.json().data._id).not.toBe(first.json().data._id)
    // A claim that never recorded a send: held while recent, taken over once its process must be gone.
    await t.app.platform.db.insert(emailSendKeys).values([
      { accountId: tenant.accountId, key: 'held', claimedAt: new Date() },
      { accountId: tenant.accountId, key: 'abandoned', claimedAt: new Date(Date.now() - 11 * 60_000) },
    ])
    expect((await keyed('held')).statusCode).toBe(409)
    expect((await keyed('abandoned')).statusCode).toBe(200)
  })

  test('asks SendGrid about a send whose process died before recording it, and sends only what it never took', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const keyed = (key: string) =>
      t.app.inject({
        method: 'POST',
        url: URL_PATH,
        headers: { ...tenant.headers, 'idempotency-key': key },
        payload: message(),
      })
    expect((await keyed('first')).statusCode).toBe(200)
    const apiKey = [...sendgrid.messages.values()][0]?.apiKey
    // Claims of two sends whose process died a while ago: SendGrid took the first one's message, not the other's.
    const died = new Date(Date.now() - 11 * 60_000)
    await t.app.platform.db.insert(emailSendKeys).values([
      {
        accountId: tenant.accountId,
        key: 'died-after-sending',
        communicationId: 'c'.repeat(24),
        claimedAt: died,
      },
      {
        accountId: tenant.accountId,
        key: 'died-before-sending',
        communicationId: 'd'.repeat(24),
        claimedAt: died,
      },
    ])
    const taken = await fetch(`${sendgrid.url}/v3/mail/send`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        personalizations: [
          { to: [{ email: 'customer@example.com' }], custom_args: { communication_id: 'c'.repeat(24) } },
        ],
        from: { email: 'sender@example.com' },
        subject: 'Hello',
        content: [{ type: 'text/plain', value: 'Hello' }],
      }),
    })
    expect(taken.status).toBe(202)
    const before = [await balance(t, tenant.accountId), mailCount(sendgrid)]

    const recovered = await keyed('died-after-sending')
    expect(recovered.statusCode).toBe(200)
    expect(recovered.json().data._id).toBe('c'.repeat(24))
    expect(recovered.json().data.msgID).toBe(messageIdOf(taken.headers.get('x-message-id') as string))
    expect(mailCount(sendgrid)).toBe(before[1])
    const resent = await keyed('died-before-sending')
    expect(resent.json().data._id).toBe('d'.repeat(24))
    expect(mailCount(sendgrid)).toBe((before[1] as number) + 1)
    // Each charged once, and each a replay from now on.
    expect(await balance(t, tenant.accountId)).toBe((before[0] as number) - 2)
    expect((await keyed('died-after-sending')).headers['idempotent-replayed']).toBe('true')
    expect((await keyed('with space')).json()).toMatchObject({
      errno: 400,
      message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
    })
  })

  test('refuses suspended accounts', async ({ t }) => {
    const suspended = await createTenant(t.app, { status: 'suspended' })
    expect((await send(t, suspended, message())).json()).toMatchObject({
      errno: 403,
      message: 'Account is suspended',
    })
  })

  test('finds a recipient contact by recipient_id when the address differs (rule 5)', async ({
    t,
    owner: tenant,
    sendgrid,
  }) => {
    const response = await send(
      t,
      tenant,
      message({ recipients: [{ email: 'lea.work@example.org', name: 'Lea', recipient_id: contactId }] }),
    )
    expect(response.json().data).toMatchObject({
      contact_id: [contactId],
      conversation_id: [expect.any(String)],
    })
    expect(sendgrid.messages.get(response.json().data.msgID)?.body.subject).toBe('Hello Lea')
  })

  test('does not link another account contact given as recipient_id', async ({ t }) => {
    const stranger = await createTenant(t.app)
    await admin(t, 'POST', `/accounts/${stranger.accountId}/credits`, { amount: 5 })
    const response = await send(
      t,
      stranger,
      message({ recipients: [{ email: 'x@example.com', recipient_id: contactId }] }),
    )
    expect(response.json().data.contact_id).toEqual([])
  })
})

describe('send email: configuration', () => {
  /** The service with `env`, a tenant holding 5 credits, and a send of `message()` as a tenant. */
  async function configured(env: Record<string, string> = {}) {
    const t = await buildTestApp(env)
    const fund = async (tenant: Tenant) => {
      await t.app.inject({
        method: 'POST',
        url: `/v1/admin/accounts/${tenant.accountId}/credits`,
        headers: adminHeaders,
        payload: { amount: 5 },
      })
      return tenant
    }
    const tenant = await fund(await createTenant(t.app))
    const send = (who: Tenant = tenant, payload: object = message()) =>
      t.app.inject({ method: 'POST', url: URL_PATH, headers: who.headers, payload })
    return { t, tenant, fund, send }
  }
  it('answers 503 while under maintenance', async () => {
    const { t, tenant, send } = await configured({ EMAIL_SEND_MAINTENANCE: 'true' })
    expect((await send(tenant, {})).statusCode).toBe(503)
    await t.close()
  })

  it('limits sends per account (RATE_LIMIT_EMAIL_SEND_PER_MINUTE)', async () => {
    const { t, tenant: busy, fund, send } = await configured({ RATE_LIMIT_EMAIL_SEND_PER_MINUTE: '2' })
    const quiet = await fund(await createTenant(t.app))
    expect([(await send(busy)).statusCode, (await send(busy)).statusCode]).toEqual([200, 200])
    const limited = await send(busy)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, errno: 429 })
    expect((await send(quiet)).statusCode).toBe(200)
    await t.close()
  })

  it('answers the spec 403 when SendGrid has no key', async () => {
    const { t, tenant, send } = await configured({ MAIL_PROVIDER: 'sendgrid' })
    const response = await send()
    expect(response.statusCode).toBe(403)
    expect(response.json()).toMatchObject({
      errno: 403,
      message: 'Sendgrid api key is misconfigured.',
      additional_info: { error: 'SENDGRID_API_MISCONFIGURED' },
    })
    const credits = await t.app.inject({
      url: `/v1/admin/accounts/${tenant.accountId}/credits`,
      headers: adminHeaders,
    })
    expect(credits.json().data.balance).toBe(5)
    await t.close()
  })

  it('keeps mail in the outbox by default, with a generated message id', async () => {
    const { t, tenant, send } = await configured()
    const response = await send()
    expect(response.statusCode).toBe(200)
    const record = response.json().data
    expect(record).toMatchObject({ module: 'OUTBOX', success: true })
    expect(record.msgID).toMatch(/^[\w-]{22}$/)
    const read = await t.app.inject({
      url: `/v1/e/mailprovider/communications/${record._id}`,
      headers: tenant.headers,
    })
    expect(read.json().data.body.subject).toBe('Hello {{contact.name}}')

    // Webhooks posted by hand thread to outbox mail as SendGrid's would to its own.
    const event = { email: 'lead@example.com', timestamp: 1_700_000_000, event: 'open', sg_event_id: 'ev-o1' }
    await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/webhook',
      payload: [{ ...event, sg_message_id: `${record.msgID}.filter0001` }],
    })
    await vi.waitFor(
      async () => {
        const events = await t.app.inject({
          url: `/v1/e/mailprovider/communications/${record._id}`,
          headers: tenant.headers,
        })
        expect(events.json().data).toMatchObject({ delivery_status: 'open', events: [event] })
      },
      { timeout: 10_000, interval: 100 },
    )
    const reply = await postInbound(
      t.app,
      replyForm({ messageId: 'reply-o1@example.com', inReplyTo: `${record.msgID}@outbox.example` }),
    )
    expect(reply.statusCode).toBe(200)
    const replies = await t.app.inject({
      url: '/v1/e/mailprovider/communications?type=INCOMING',
      headers: tenant.headers,
    })
    expect(replies.json().data).toEqual([
      expect.objectContaining({ module: 'OUTBOX', referenceID: `${record.msgID}@outbox.example` }),
    ])
    await t.close()
  })
})
