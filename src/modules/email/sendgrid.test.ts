import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type FakeSendgrid, MAX_MAIL_BYTES, startFakeSendgrid } from '../../../test/fakes/sendgrid.js'
import {
  createSendgridClient,
  messageIdOf,
  type SendgridClient,
  SendgridError,
  type SendgridMailBody,
} from './sendgrid.js'

const PARENT_KEY = 'SG.parent-key'
const SUBUSER_KEY = 'SG.subuser-key'
const SUBUSER = 'shop-1'

const mail = (): SendgridMailBody => ({
  personalizations: [
    {
      to: [{ email: 'ana@example.com', name: 'Ana Lima' }],
      cc: [{ email: 'ben@example.com' }],
      subject: 'Your quote',
      custom_args: { account_id: 'a1', uid: 'u1', origin: 'app', communication_id: 'c1' },
    },
  ],
  from: { email: 'shop@example.com', name: 'The Shop' },
  reply_to: { email: 'owner@example.com' },
  subject: 'Your quote',
  content: [
    { type: 'text/plain', value: 'Hello Ana' },
    { type: 'text/html', value: '<p>Hello Ana</p>' },
  ],
  attachments: [
    { content: Buffer.from('quote').toString('base64'), filename: 'quote.txt', type: 'text/plain' },
  ],
  headers: { 'X-Account-ID': 'a1', 'X-User-ID': 'u1', 'X-Email-Origin': 'app' },
})

/** The SendgridError a call rejects with (fails the test when it resolves or throws anything else). */
async function refusal(call: Promise<unknown>): Promise<SendgridError> {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(SendgridError)
  return error as SendgridError
}

let fake: FakeSendgrid
let client: SendgridClient

beforeAll(async () => {
  fake = await startFakeSendgrid({ apiKeys: [PARENT_KEY, SUBUSER_KEY], subusers: [SUBUSER] })
  client = createSendgridClient({ baseUrl: fake.url, parentApiKey: PARENT_KEY })
})
afterAll(() => fake.close())
beforeEach(() => {
  fake.received.length = 0
  fake.messages.clear()
})

describe('messageIdOf', () => {
  it('keeps the text before the first dot', () => {
    expect(messageIdOf('14c5d75ce93.dfd.64b469.filter0001p1las1-16816-5A8B4B0D-4.0')).toBe('14c5d75ce93')
    expect(messageIdOf('W8Zq3kq1TS2Hk3lG2bCm1A')).toBe('W8Zq3kq1TS2Hk3lG2bCm1A')
  })
})

describe('sendMail', () => {
  it('sends the body with the Bearer key and answers the message id and headers', async () => {
    const body = mail()
    const sent = await client.sendMail(SUBUSER_KEY, body)

    expect(sent.messageId).toMatch(/^[\w-]{22}$/)
    expect(sent.headers['x-message-id']).toBe(sent.messageId)
    expect(fake.received).toHaveLength(1)
    const [request] = fake.received
    expect(request?.method).toBe('POST')
    expect(request?.path).toBe('/v3/mail/send')
    expect(request?.headers.authorization).toBe(`Bearer ${SUBUSER_KEY}`)
    expect(request?.headers['content-type']).toBe('application/json')
    expect(request?.body).toEqual(body)
    expect(fake.messages.get(sent.messageId)).toMatchObject({ apiKey: SUBUSER_KEY, body })
  })

  it('takes the message id from before the first dot of X-Message-Id', async () => {
    const suffix = '.filter0001p1las1-28979-5F6B0C5F-2.0'
    const dotted = await startFakeSendgrid({ apiKeys: [PARENT_KEY], messageIdSuffix: suffix })
    try {
      const sent = await createSendgridClient({ baseUrl: dotted.url, parentApiKey: PARENT_KEY }).sendMail(
        PARENT_KEY,
        mail(),
      )
      expect(sent.messageId).toMatch(/^[\w-]{22}$/)
      expect(sent.headers['x-message-id']).toBe(`${sent.messageId}${suffix}`)
      expect(dotted.messages.has(sent.messageId)).toBe(true)
    } finally {
      await dotted.close()
    }
  })

  it("turns SendGrid's validation errors into a SendgridError 400, without retrying", async () => {
    const body = { ...mail(), subject: undefined, content: [...(mail().content ?? [])].reverse() }
    body.personalizations = [{ to: [{ email: 'ana@example.com' }] }]

    const error = await refusal(client.sendMail(SUBUSER_KEY, body))

    expect(error.status).toBe(400)
    expect(error.errors).toEqual([
      expect.objectContaining({
        field: 'subject',
        message: expect.stringMatching(/^The subject is required/),
      }),
      expect.objectContaining({ field: 'content', message: expect.stringContaining('text/plain') }),
    ])
    expect(fake.received).toHaveLength(1)
    expect(fake.messages.size).toBe(0)
  })

  it('retries a 503 and succeeds on the next answer', async () => {
    fake.failNext(503)
    const sent = await client.sendMail(SUBUSER_KEY, mail())
    expect(fake.received).toHaveLength(2)
    expect(fake.messages.has(sent.messageId)).toBe(true)
  })

  it('gives up after two retries of a 5xx', async () => {
    fake.failNext(500, 3)
    const error = await refusal(client.sendMail(SUBUSER_KEY, mail()))
    expect(error.status).toBe(500)
    expect(error.errors[0]?.message).toBe('internal error')
    expect(fake.received).toHaveLength(3)
  })

  it('waits for X-RateLimit-Reset after a 429, then retries', async () => {
    fake.failNext(429)
    await client.sendMail(SUBUSER_KEY, mail())
    const [limited, retried] = fake.received
    expect(retried).toBeDefined()
    // The fake's reset is at least one second after it answered the 429.
    expect((retried?.receivedAt ?? 0) - (limited?.receivedAt ?? 0)).toBeGreaterThanOrEqual(990)
  })

  it('answers a 429 whose reset is far away at once instead of waiting for it', async () => {
    const slow = await startFakeSendgrid({ apiKeys: [PARENT_KEY], rateLimitResetSeconds: 60 })
    try {
      slow.failNext(429)
      const started = Date.now()
      const error = await refusal(
        createSendgridClient({ baseUrl: slow.url, parentApiKey: PARENT_KEY }).sendMail(PARENT_KEY, mail()),
      )
      expect(error.status).toBe(429)
      expect(slow.received).toHaveLength(1)
      expect(Date.now() - started).toBeLessThan(5_000)
    } finally {
      await slow.close()
    }
  })

  it('does not retry a 401', async () => {
    const error = await refusal(client.sendMail('SG.unknown', mail()))
    expect(error.status).toBe(401)
    expect(error.errors).toEqual([
      {
        message: 'The provided authorization grant is invalid, expired, or revoked',
        field: null,
        help: null,
      },
    ])
    expect(fake.received).toHaveLength(1)
  })

  it('reports a payload over 30 MB, refused by HTML from SendGrid’s proxy, as a SendgridError 413', async () => {
    const body = mail()
    body.attachments = [{ content: 'A'.repeat(MAX_MAIL_BYTES), filename: 'huge.bin' }]
    const error = await refusal(client.sendMail(SUBUSER_KEY, body))
    expect(error.status).toBe(413)
    expect(error.errors[0]?.message).toMatch(/^413 Request Entity Too Large\b/)
    expect(fake.received).toHaveLength(1)
  })

  it('answers 502 when SendGrid cannot be reached, without sending twice', async () => {
    const gone = await startFakeSendgrid({ apiKeys: [PARENT_KEY] })
    await gone.close()
    const error = await refusal(
      createSendgridClient({ baseUrl: gone.url, parentApiKey: PARENT_KEY }).sendMail(PARENT_KEY, mail()),
    )
    expect(error.status).toBe(502)
    expect(error.errors).toEqual([{ message: 'SendGrid unreachable' }])
  })

  it('refuses an empty key without calling SendGrid', async () => {
    const error = await refusal(client.sendMail('', mail()))
    expect(error.status).toBe(403)
    expect(fake.received).toHaveLength(0)
  })
})

describe('the fake checks mail the way SendGrid does', () => {
  const withChange = (change: (body: SendgridMailBody) => unknown): SendgridMailBody => {
    const body = mail()
    change(body)
    return body
  }
  const first = (body: SendgridMailBody) => {
    const personalization = body.personalizations[0]
    if (!personalization) throw new Error('the sample mail has a personalization')
    return personalization
  }

  // Each case spoils one thing in a body SendGrid accepts, and names the field SendGrid reports.
  it.each<[string, (body: SendgridMailBody) => unknown, string]>([
    ['no personalizations', (b) => Object.assign(b, { personalizations: [] }), 'personalizations'],
    ['a personalization without to', (b) => Object.assign(first(b), { to: [] }), 'personalizations.0.to'],
    [
      'a to without an email',
      (b) => Object.assign(first(b), { to: [{ email: '' }] }),
      'personalizations.0.to.0.email',
    ],
    [
      'a name with a comma',
      (b) => Object.assign(first(b), { to: [{ email: 'x@example.com', name: 'Lima, Ana' }] }),
      'personalizations.0.to.0.name',
    ],
    [
      'the same address in to and cc',
      (b) => Object.assign(first(b), { cc: [{ email: 'ANA@example.com' }] }),
      'personalizations.0',
    ],
    ['no from email', (b) => Object.assign(b, { from: { email: 'shop' } }), 'from.email'],
    [
      'no subject anywhere',
      (b) => Object.assign(first(Object.assign(b, { subject: undefined })), { subject: undefined }),
      'subject',
    ],
    ['no content', (b) => Object.assign(b, { content: [] }), 'content'],
    [
      'an empty content value',
      (b) => Object.assign(b, { content: [{ type: 'text/plain', value: '' }] }),
      'content.0.value',
    ],
    [
      'a number in custom_args',
      (b) => Object.assign(first(b), { custom_args: { n: 1 } }),
      'personalizations.0.custom_args.n',
    ],
    ['a number in headers', (b) => Object.assign(b, { headers: { 'X-Count': 2 } }), 'headers.X-Count'],
    [
      'attachment content not base64',
      (b) => Object.assign(b, { attachments: [{ content: 'not base64!', filename: 'a' }] }),
      'attachments.0.content',
    ],
    [
      'attachment without filename',
      (b) => Object.assign(b, { attachments: [{ content: 'YQ==' }] }),
      'attachments.0.filename',
    ],
    [
      'inline attachment without content_id',
      (b) => Object.assign(b, { attachments: [{ content: 'YQ==', filename: 'a', disposition: 'inline' }] }),
      'attachments.0.content_id',
    ],
  ])('refuses %s with a 400 naming %s', async (_, change, field) => {
    const error = await refusal(client.sendMail(SUBUSER_KEY, withChange(change)))
    expect(error.status).toBe(400)
    expect(error.errors.map((e) => e.field)).toContain(field)
  })

  it('accepts a template send without subject or content, and a subject given per personalization', async () => {
    await client.sendMail(
      SUBUSER_KEY,
      withChange((b) => {
        b.subject = undefined
        b.content = undefined
        b.template_id = 'd-0123456789abcdef0123456789abcdef'
        first(b).subject = undefined
        first(b).dynamic_template_data = { name: 'Ana' }
      }),
    )
    await client.sendMail(
      SUBUSER_KEY,
      withChange((b) => Object.assign(b, { subject: undefined })),
    )
    expect(fake.messages.size).toBe(2)
  })
})

describe('settings calls', () => {
  it('send the parent key and On-Behalf-Of, and read and merge the event webhook settings', async () => {
    const initial = await client.getEventWebhookSettings(SUBUSER)
    expect(initial).toMatchObject({ enabled: false, url: '', delivered: false })

    const url = 'https://api.example.com/v1/e/mailprovider/webhook'
    const updated = await client.updateEventWebhookSettings(SUBUSER, {
      enabled: true,
      url,
      delivered: true,
      open: true,
    })
    expect(updated).toMatchObject({ enabled: true, url, delivered: true, open: true, processed: false })

    // PATCH merges: fields left out keep their value.
    const merged = await client.updateEventWebhookSettings(SUBUSER, { deferred: false, click: true })
    expect(merged).toEqual({ ...updated, click: true })
    expect(await client.getEventWebhookSettings(SUBUSER)).toEqual(merged)

    expect(fake.received.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /v3/user/webhooks/event/settings',
      'PATCH /v3/user/webhooks/event/settings',
      'PATCH /v3/user/webhooks/event/settings',
      'GET /v3/user/webhooks/event/settings',
    ])
    for (const request of fake.received) {
      expect(request.headers.authorization).toBe(`Bearer ${PARENT_KEY}`)
      expect(request.headers['on-behalf-of']).toBe(SUBUSER)
    }
    expect(fake.received[2]?.body).toEqual({ deferred: false, click: true })
  })

  it('create, read and update Inbound Parse settings; a missing hostname reads as null', async () => {
    const hostname = 'reply.shop.example.com'
    expect(await client.getParseSettings(SUBUSER, hostname)).toBeNull()

    const settings = {
      hostname,
      url: 'https://api.example.com/v1/e/mailprovider/webhook/inbound',
      spam_check: true,
      send_raw: false,
    }
    expect(await client.createParseSettings(SUBUSER, settings)).toEqual(settings)
    expect(await client.getParseSettings(SUBUSER, hostname)).toEqual(settings)

    const again = await refusal(client.createParseSettings(SUBUSER, settings))
    expect(again.status).toBe(400)
    expect(again.errors).toEqual([
      expect.objectContaining({ field: 'hostname', message: 'hostname already exists' }),
    ])

    const moved = { ...settings, url: 'https://new.example.com/inbound' }
    expect(await client.updateParseSettings(SUBUSER, moved)).toEqual(moved)
    expect(fake.parseSettingsOf(SUBUSER)).toEqual([moved])

    const patch = fake.received.find((r) => r.method === 'PATCH')
    expect(patch?.path).toBe(`/v3/user/webhooks/parse/settings/${hostname}`)
    expect(patch?.body).toEqual({ url: moved.url, spam_check: true, send_raw: false })
    expect(fake.received.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([
      '/v3/user/webhooks/parse/settings',
      '/v3/user/webhooks/parse/settings',
    ])
    expect(fake.received.every((r) => r.headers['on-behalf-of'] === SUBUSER)).toBe(true)
  })

  it('are refused for a subuser SendGrid does not know', async () => {
    const error = await refusal(client.getEventWebhookSettings('someone-else'))
    expect(error.status).toBe(403)
  })

  it('without a parent key fail with the 403 and send nothing', async () => {
    const keyless = createSendgridClient({ baseUrl: fake.url, parentApiKey: undefined })
    const settings = {
      hostname: 'h.example.com',
      url: 'https://x.example.com',
      spam_check: true,
      send_raw: false,
    }
    const calls = [
      keyless.getEventWebhookSettings(SUBUSER),
      keyless.updateEventWebhookSettings(SUBUSER, { enabled: true }),
      keyless.getParseSettings(SUBUSER, settings.hostname),
      keyless.createParseSettings(SUBUSER, settings),
      keyless.updateParseSettings(SUBUSER, settings),
    ]
    for (const call of calls) {
      const error = await refusal(call)
      expect(error.status).toBe(403)
      expect(error.errors).toEqual([{ message: 'Sendgrid api key is misconfigured.' }])
    }
    expect(fake.received).toHaveLength(0)
  })
})
