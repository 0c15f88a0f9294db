import { describe, expect, it } from 'vitest'
import { type FakeSendgrid, startFakeSendgrid } from '../../../test/fakes/sendgrid.js'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'

const PARENT_KEY = 'SG.parent-key'
const PUBLIC_BASE_URL = 'https://platform.example.com'
const WEBHOOK = '/v1/e/mailprovider/webhook/create'
const INBOUND = '/v1/e/mailprovider/webhook/inbound/create'

test.override('sendgridOptions', { apiKeys: [PARENT_KEY], subusers: ['agency-a', 'agency-b'] })
test.override('appEnv', ({ sendgrid }) => ({
  MAIL_PROVIDER: 'sendgrid',
  SENDGRID_API_KEY: PARENT_KEY,
  SENDGRID_BASE_URL: sendgrid.url,
  PUBLIC_BASE_URL,
}))

const EXPECTED_EVENT_WEBHOOK = {
  enabled: true,
  url: `${PUBLIC_BASE_URL}/v1/e/mailprovider/webhook`,
  delivered: true,
  open: true,
  click: true,
  bounce: true,
  dropped: true,
  spam_report: true,
  unsubscribe: true,
  group_unsubscribe: true,
  group_resubscribe: true,
  deferred: false,
  processed: false,
}

const expectedParse = (hostname: string) => ({
  hostname,
  url: `${PUBLIC_BASE_URL}/v1/e/mailprovider/webhook/inbound`,
  spam_check: true,
  send_raw: false,
})

async function setSubuser(t: TestApp, accountId: string, username: string) {
  const response = await t.app.inject({
    method: 'PUT',
    url: `/v1/admin/accounts/${accountId}/mail-subuser`,
    headers: adminHeaders,
    payload: { username, api_key: `SG.${username}-key` },
  })
  expect(response.statusCode).toBe(200)
}

describe('email provider set-up through SendGrid', () => {
  const post = (t: TestApp, url: string, who: Tenant | undefined, payload?: object) =>
    t.app.inject({ method: 'POST', url, headers: who?.headers ?? {}, ...(payload ? { payload } : {}) })
  /** Changes a subuser's settings at the fake directly, as someone editing them in SendGrid's UI would. */
  const editAtProvider = async (
    sendgrid: FakeSendgrid,
    subuser: string,
    method: string,
    path: string,
    body: object,
  ) => {
    const response = await fetch(`${sendgrid.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${PARENT_KEY}`,
        'on-behalf-of': subuser,
        'content-type': 'application/json',
      },
      body: JSON.stringify(body),
    })
    expect(response.ok).toBe(true)
  }
  const requestsFor = (sendgrid: FakeSendgrid, subuser: string) =>
    sendgrid.received.filter((request) => request.headers['on-behalf-of'] === subuser)

  test.beforeAll(async ({ t, owner: agency, stranger: other }) => {
    await setSubuser(t, agency.accountId, 'agency-a')
    await setSubuser(t, other.accountId, 'agency-b')
  })
  test.beforeEach(({ sendgrid }) => {
    sendgrid.received.length = 0
  })

  describe('POST mailprovider/webhook/create', () => {
    test("points the subuser's event webhook at our events URL with exactly the spec's events", async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      const response = await post(t, WEBHOOK, agency)
      expect(response.statusCode).toBe(200)
      expect(sendgrid.eventWebhookSettingsOf('agency-a')).toEqual(EXPECTED_EVENT_WEBHOOK)
      expect(response.json()).toEqual({ success: true, message: 'SUCCESS', data: EXPECTED_EVENT_WEBHOOK })
      expect(sendgrid.received).toHaveLength(1)
      expect(sendgrid.received[0]).toMatchObject({
        method: 'PATCH',
        path: '/v3/user/webhooks/event/settings',
        headers: { authorization: `Bearer ${PARENT_KEY}`, 'on-behalf-of': 'agency-a' },
      })
    })

    test('updates the one webhook on a second call, under the other prefix, overwriting edits', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      await post(t, WEBHOOK, agency)
      await editAtProvider(sendgrid, 'agency-a', 'PATCH', '/v3/user/webhooks/event/settings', {
        url: 'https://elsewhere.example.com/hook',
        deferred: true,
        open: false,
      })
      const response = await post(t, '/v1/integrations/mailprovider/webhook/create', agency)
      expect(response.statusCode).toBe(200)
      expect(response.json().data).toEqual(EXPECTED_EVENT_WEBHOOK)
      expect(sendgrid.eventWebhookSettingsOf('agency-a')).toEqual(EXPECTED_EVENT_WEBHOOK)
      // Only the settings endpoint is written: nothing that could create a second webhook.
      const writes = requestsFor(sendgrid, 'agency-a').filter((request) => request.method !== 'GET')
      expect(writes.map((request) => `${request.method} ${request.path}`)).toEqual([
        'PATCH /v3/user/webhooks/event/settings',
        'PATCH /v3/user/webhooks/event/settings',
        'PATCH /v3/user/webhooks/event/settings',
      ])
    })

    test("never touches another account's subuser", async ({
      t,
      owner: agency,
      stranger: other,
      sendgrid,
    }) => {
      expect(sendgrid.eventWebhookSettingsOf('agency-b')).toBeUndefined()
      await post(t, WEBHOOK, agency)
      expect(sendgrid.eventWebhookSettingsOf('agency-b')).toBeUndefined()
      expect(requestsFor(sendgrid, 'agency-b')).toEqual([])
      await post(t, WEBHOOK, other)
      expect(requestsFor(sendgrid, 'agency-b')).toHaveLength(1)
      expect(sendgrid.eventWebhookSettingsOf('agency-b')).toEqual(EXPECTED_EVENT_WEBHOOK)
    })

    test('refuses an account without a subuser, calling nothing', async ({
      t,
      bystander: withoutSubuser,
      sendgrid,
    }) => {
      const response = await post(t, WEBHOOK, withoutSubuser)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({
        success: false,
        errno: 400,
        message: 'No email provider subuser is set for this account',
      })
      expect(sendgrid.received).toEqual([])
    })

    test('answers 502 naming the provider error when SendGrid keeps failing', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      sendgrid.failNext(500, 3)
      const response = await post(t, WEBHOOK, agency)
      expect(response.statusCode).toBe(502)
      expect(response.json()).toMatchObject({
        errno: 502,
        message: 'SendGrid refused the event webhook settings: internal error',
        additional_info: { status: 500 },
      })
      expect(sendgrid.received).toHaveLength(3)
    })

    test("answers 502 with SendGrid's refusal of a subuser it does not know", async ({ t }) => {
      const stranger = await createTenant(t.app)
      await setSubuser(t, stranger.accountId, 'unknown-subuser')
      const response = await post(t, WEBHOOK, stranger)
      expect(response.statusCode).toBe(502)
      expect(response.json()).toMatchObject({
        message: 'SendGrid refused the event webhook settings: access forbidden',
        additional_info: { status: 403 },
      })
    })

    test('needs a token', async ({ t, sendgrid }) => {
      const response = await post(t, WEBHOOK, undefined)
      expect(response.statusCode).toBe(401)
      expect(sendgrid.received).toEqual([])
    })
  })

  describe('POST mailprovider/webhook/inbound/create', () => {
    test('creates the Inbound Parse settings and answers them with the MX record', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      const response = await post(t, INBOUND, agency, { hostname: 'reply.agency-a.example.com' })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual({
        success: true,
        message: 'SUCCESS',
        data: {
          settings: expectedParse('reply.agency-a.example.com'),
          mx_record: {
            type: 'MX',
            host: 'reply.agency-a.example.com',
            value: 'mx.sendgrid.net',
            priority: 10,
          },
        },
      })
      expect(sendgrid.parseSettingsOf('agency-a')).toEqual([expectedParse('reply.agency-a.example.com')])
      expect(sendgrid.received.map((request) => `${request.method} ${request.path}`)).toEqual([
        'GET /v3/user/webhooks/parse/settings/reply.agency-a.example.com',
        'POST /v3/user/webhooks/parse/settings',
      ])
      expect(sendgrid.received.every((request) => request.headers['on-behalf-of'] === 'agency-a')).toBe(true)
    })

    test('updates the settings when the hostname exists, keeping one', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      await post(t, INBOUND, agency, { hostname: 'in.agency-a.example.com' })
      await editAtProvider(
        sendgrid,
        'agency-a',
        'PATCH',
        '/v3/user/webhooks/parse/settings/in.agency-a.example.com',
        {
          url: 'https://elsewhere.example.com/parse',
          spam_check: false,
          send_raw: true,
        },
      )
      sendgrid.received.length = 0
      const response = await post(t, '/v1/integrations/mailprovider/webhook/inbound/create', agency, {
        hostname: 'In.Agency-A.example.com.',
      })
      expect(response.statusCode).toBe(200)
      expect(response.json().data.settings).toEqual(expectedParse('in.agency-a.example.com'))
      expect(response.json().data.mx_record.host).toBe('in.agency-a.example.com')
      expect(sendgrid.received.map((request) => `${request.method} ${request.path}`)).toEqual([
        'GET /v3/user/webhooks/parse/settings/in.agency-a.example.com',
        'PATCH /v3/user/webhooks/parse/settings/in.agency-a.example.com',
      ])
      const hosts = sendgrid
        .parseSettingsOf('agency-a')
        .filter((s) => s.hostname === 'in.agency-a.example.com')
      expect(hosts).toEqual([expectedParse('in.agency-a.example.com')])
    })

    test('ends with one configuration when two set-ups of a new hostname race', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      const hostname = 'race.agency-a.example.com'
      const [first, second] = await Promise.all([
        post(t, INBOUND, agency, { hostname }),
        post(t, INBOUND, agency, { hostname }),
      ])
      expect([first?.statusCode, second?.statusCode]).toEqual([200, 200])
      expect(sendgrid.parseSettingsOf('agency-a').filter((s) => s.hostname === hostname)).toEqual([
        expectedParse(hostname),
      ])
    })

    test("never touches another account's subuser", async ({
      t,
      owner: agency,
      stranger: other,
      sendgrid,
    }) => {
      await post(t, INBOUND, agency, { hostname: 'mine.example.com' })
      expect(requestsFor(sendgrid, 'agency-b')).toEqual([])
      expect(sendgrid.parseSettingsOf('agency-b')).toEqual([])
      await post(t, INBOUND, other, { hostname: 'mine.example.com' })
      expect(sendgrid.parseSettingsOf('agency-b')).toEqual([expectedParse('mine.example.com')])
    })

    test.for<[object, string]>([
      [{}, 'hostname is required'],
      [{ hostname: '' }, 'hostname must not be empty'],
      // Fastify coerces scalars to the schema's type, so a number reaches the domain check as text.
      [{ hostname: 42 }, 'hostname must be a domain name, such as mail.example.com'],
      [{ hostname: { name: 'a.example.com' } }, 'hostname must be string'],
      [{ hostname: 'localhost' }, 'hostname must be a domain name, such as mail.example.com'],
      [{ hostname: 'https://mail.example.com' }, 'hostname must be a domain name, such as mail.example.com'],
      [{ hostname: 'mail example.com' }, 'hostname must be a domain name, such as mail.example.com'],
      [{ hostname: '-mail.example.com' }, 'hostname must be a domain name, such as mail.example.com'],
      [{ hostname: '192.168.1.10' }, 'hostname must be a domain name, such as mail.example.com'],
      [
        { hostname: `${'a'.repeat(64)}.example.com` },
        'hostname must be a domain name, such as mail.example.com',
      ],
    ])(
      'refuses %j with a 400 naming the field',
      async ([payload, message], { t, owner: agency, sendgrid }) => {
        const response = await post(t, INBOUND, agency, payload)
        expect(response.statusCode).toBe(400)
        expect(response.json()).toMatchObject({ errno: 400, message })
        expect(sendgrid.received).toEqual([])
      },
    )

    test('refuses an account without a subuser', async ({ t, bystander: withoutSubuser, sendgrid }) => {
      const response = await post(t, INBOUND, withoutSubuser, { hostname: 'mail.example.com' })
      expect(response.json()).toMatchObject({
        errno: 400,
        message: 'No email provider subuser is set for this account',
      })
      expect(sendgrid.received).toEqual([])
    })

    test('answers 502 naming the provider error when SendGrid keeps failing', async ({
      t,
      owner: agency,
      sendgrid,
    }) => {
      sendgrid.failNext(500, 3)
      const response = await post(t, INBOUND, agency, { hostname: 'down.example.com' })
      expect(response.statusCode).toBe(502)
      expect(response.json()).toMatchObject({
        message: 'SendGrid refused the inbound parse settings: internal error',
        additional_info: { status: 500 },
      })
      expect(sendgrid.parseSettingsOf('agency-a').some((s) => s.hostname === 'down.example.com')).toBe(false)
    })

    test('needs a token', async ({ t }) => {
      const response = await post(t, INBOUND, undefined, { hostname: 'mail.example.com' })
      expect(response.statusCode).toBe(401)
    })
  })
})

describe('email provider set-up: configuration', () => {
  it('answers 400 with MAIL_PROVIDER=outbox', async () => {
    const t = await buildTestApp({ MAIL_PROVIDER: 'outbox' })
    try {
      const tenant = await createTenant(t.app)
      await setSubuser(t, tenant.accountId, 'agency-outbox')
      const webhook = await t.app.inject({ method: 'POST', url: WEBHOOK, headers: tenant.headers })
      expect(webhook.statusCode).toBe(400)
      expect(webhook.json().message).toBe('Webhook set-up needs MAIL_PROVIDER=sendgrid')
      const inbound = await t.app.inject({
        method: 'POST',
        url: INBOUND,
        headers: tenant.headers,
        payload: { hostname: 'mail.example.com' },
      })
      expect(inbound.statusCode).toBe(400)
      expect(inbound.json().message).toBe('Inbound set-up needs MAIL_PROVIDER=sendgrid')
    } finally {
      await t.close()
    }
  })

  it('answers the spec 403 without the parent key, even with a subuser, calling nothing', async () => {
    const sendgrid = await startFakeSendgrid({ apiKeys: [PARENT_KEY], subusers: ['agency-a'] })
    const t = await buildTestApp({ MAIL_PROVIDER: 'sendgrid', SENDGRID_BASE_URL: sendgrid.url })
    try {
      const withSubuser = await createTenant(t.app)
      await setSubuser(t, withSubuser.accountId, 'agency-a')
      const bare = await createTenant(t.app)
      const calls = [
        { who: withSubuser, url: WEBHOOK },
        { who: withSubuser, url: INBOUND, payload: { hostname: 'mail.example.com' } },
        { who: bare, url: WEBHOOK },
      ]
      for (const { who, url, payload } of calls) {
        const response = await t.app.inject({ method: 'POST', url, headers: who.headers, payload })
        expect(response.statusCode, url).toBe(403)
        expect(response.json()).toEqual({
          success: false,
          errno: 403,
          message: 'Sendgrid api key is misconfigured.',
          additional_info: { error: 'SENDGRID_API_MISCONFIGURED' },
        })
      }
      expect(sendgrid.received).toEqual([])
    } finally {
      await t.close()
      await sendgrid.close()
    }
  })
})
