import { readFile } from 'node:fs/promises'
import { sql } from 'drizzle-orm'
import type { Browser, Page } from 'playwright-core'
import { describe, expect, vi } from 'vitest'
import {
  adminHeaders,
  anotherInstance,
  bearer,
  TEST_ADMIN_TOKEN,
  type TestApp,
} from '../../../test/helpers/app.js'
import { launchChromium } from '../../../test/helpers/browser.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { sentEmail } from '../../../test/helpers/inbound-email.js'
import { expectListRefusals } from '../../../test/helpers/lists.js'
import { chargeFor, reviewingTenant, sendRequestOfCharge } from '../../../test/helpers/reviews.js'
import { DOCUMENT_SECURITY_HEADERS } from '../../../test/helpers/security-headers.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { buildApp } from '../../app.js'
import { ADMIN_AUTH_FAILURES } from '../../platform/auth/plugin.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import { SESSION_SECONDS } from './outbox-page.service.js'

const STRIPE_SECRET = 'whsec_test_outbox_page'
const OUTBOX = '/v1/admin/outbox'
// TRUST_PROXY: the Secure cookie is checked behind a proxy that terminates https.
test.override('appEnv', { STRIPE_WEBHOOK_SECRET: STRIPE_SECRET, TRUST_PROXY: 'true' })

/** What a browser's navigation asks for: the pages answer it with pages, refusals included. */
const BROWSER = { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' }
const FORM = { ...BROWSER, 'content-type': 'application/x-www-form-urlencoded' }
const signInPost = (t: TestApp, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `${OUTBOX}/sign-in`,
    headers: { ...FORM, ...headers },
    payload: new URLSearchParams(fields).toString(),
  })

/** The session cookie the sign-in form sets, as a Cookie header; `app` is another instance to sign in at. */
async function signIn(t: TestApp, app = t.app, token = TEST_ADMIN_TOKEN): Promise<{ cookie: string }> {
  const response = await app.inject({
    method: 'POST',
    url: `${OUTBOX}/sign-in`,
    headers: FORM,
    payload: new URLSearchParams({ token }).toString(),
  })
  const session = response.cookies.find((c) => c.name === 'outbox_session')
  if (!session) throw new Error(`sign-in answered ${response.statusCode} without a session`)
  return { cookie: `outbox_session=${session.value}` }
}

const get = (t: TestApp, url: string, headers: Record<string, string> = {}) =>
  t.app.inject({ url, headers: { ...BROWSER, ...headers } })

/** The subjects of a mail list, in the order shown. */
const subjectsOf = (body: string) =>
  [
    ...body.matchAll(
      /<a href="\/v1\/admin\/outbox\/accounts\/[0-9a-f]{24}\/emails\/[0-9a-f]{24}">([^<]*)<\/a>/g,
    ),
  ].map((match) => match[1])

/** Sends through the send route (the outbox provider); files go as multipart attachments. */
async function send(t: TestApp, tenant: Tenant, fields: Record<string, unknown>, files: File[] = []) {
  const message = {
    sender: { email: 'shop@example.com', name: 'Shop' },
    recipients: [{ email: 'ada@example.com', name: 'Ada' }],
    origin: 'campaign',
    ...fields,
  }
  const form = new FormData()
  for (const [name, value] of Object.entries(message))
    form.append(name, typeof value === 'string' ? value : JSON.stringify(value))
  for (const file of files) form.append('attachments', file, file.name)
  const request = new Request('http://localhost', { method: 'POST', body: form })
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/e/mailprovider/mail',
    headers: { ...tenant.headers, 'content-type': request.headers.get('content-type') as string },
    payload: Buffer.from(await request.arrayBuffer()),
  })
  if (response.statusCode !== 200) throw new Error(`send answered ${response.statusCode}: ${response.body}`)
  return response.json().data as { _id: string; msgID: string; account_id: string }
}

/** A message whose script, were it run, would say so. */
const FIRST_HTML =
  '<p>Here is <b>your quote</b></p><p id="check">The script did not run.</p>' +
  '<script>document.getElementById("check").textContent = "The script ran."</script>'
const HOSTILE_SUBJECT = `<img src=x onerror=alert(1)> "Deal" & more`
const seeded = {} as {
  first: { _id: string; account_id: string }
  hostile: { _id: string; account_id: string }
  strangers: { _id: string; account_id: string }
  sms: { accountId: string; phone: string }
}

// Every describe reads these messages: seeded once for the file, whichever tests run.
test.beforeAll(async ({ t, owner, stranger }) => {
  for (const tenant of [owner, stranger])
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${tenant.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 20 },
    })
  const first = await send(
    t,
    owner,
    {
      subject: 'Your quote',
      cc: [{ email: 'boss@example.com' }],
      content: [
        { type: 'text/html', value: FIRST_HTML },
        { type: 'text/plain', value: 'Here is your quote' },
      ],
    },
    [new File(['%PDF-1.4 quote'], 'quote.pdf', { type: 'application/pdf' })],
  )
  await t.app.inject({
    method: 'POST',
    url: '/v1/e/mailprovider/webhook',
    payload: ['processed', 'delivered'].map((event, i) => ({
      email: 'ada@example.com',
      timestamp: 1_700_000_000 + i,
      event,
      sg_event_id: `outbox-page-${event}`,
      sg_message_id: `${first.msgID}.filter0001`,
    })),
  })
  const strangers = await send(t, stranger, {
    subject: 'Stranger news',
    content: [{ type: 'text/plain', value: 'Plain only' }],
  })
  const hostile = await send(
    t,
    owner,
    {
      subject: HOSTILE_SUBJECT,
      sender: { email: 'eve@example.com', name: 'Eve <script>x</script>' },
      content: [
        { type: 'text/html', value: '<script>document.title="ran"</script><p>Hi</p>' },
        { type: 'text/plain', value: '</pre><script>alert(2)</script>' },
      ],
    },
    [new File(['x'], "'><b onclick=alert(3)>.txt", { type: 'text/html' })],
  )
  const bakery = await reviewingTenant(t, { send_method: 'sms', delay_hours: 1 })
  const phone = '+14155550123'
  await sendRequestOfCharge(t, STRIPE_SECRET, bakery, chargeFor(bakery, { name: 'Grace', phone }))
  Object.assign(seeded, { first, hostile, strangers, sms: { accountId: bakery.accountId, phone } })
  // The delivery events are applied by a job.
  const session = await signIn(t)
  await vi.waitFor(
    async () => expect((await get(t, OUTBOX, session)).body).toContain('processed, delivered'),
    { timeout: 10_000, interval: 100 },
  )
})

describe('the outbox pages', () => {
  test('answers the sign-in page (401) without the admin token, with a platform token, a wrong one, or no live session', async ({
    t,
    owner,
  }) => {
    const { first } = seeded
    const mail = `${OUTBOX}/accounts/${first.account_id}/emails/${first._id}`
    // A session begun 12 hours and a minute ago has expired.
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() - (SESSION_SECONDS + 60) * 1000)
    const expiredSession = await signIn(t).finally(() => vi.useRealTimers())
    // A session begun under another ADMIN_TOKEN ended with it.
    const before = await buildApp(
      { ...t.config, adminToken: 'another-admin-token' },
      { database: t.database.handle },
    )
    const otherTokensSession = await signIn(t, before, 'another-admin-token').finally(() => before.close())
    const refused = {
      nothing: {},
      platformToken: owner.headers,
      wrongToken: bearer('not-the-admin-token'),
      forgedSession: { cookie: `outbox_session=${'A'.repeat(43)}` },
      oldSignedExpiry: { cookie: 'outbox_session=99999999999.c2lnbmF0dXJl' },
      expiredSession,
      otherTokensSession,
    }
    for (const [name, headers] of Object.entries(refused)) {
      for (const url of [OUTBOX, `${OUTBOX}/sms`, mail, `${mail}/html`, `${mail}/attachments/0`]) {
        const response = await get(t, url, headers)
        expect(response.statusCode, `${name} ${url}`).toBe(401)
        expect(response.headers['content-type']).toBe('text/html; charset=utf-8')
        expect(response.body).toContain('<form method="post" action="/v1/admin/outbox/sign-in">')
        expect(response.body).toContain(`<input type="hidden" name="next" value="${url}">`)
        expect(response.body).not.toContain('Your quote')
      }
    }
    const page = await get(t, OUTBOX)
    expect(page.headers['content-security-policy']).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'",
    )
    expect(page.headers['x-frame-options']).toBe('DENY')
    expect(page.headers['cache-control']).toBe('no-store')
    expect(page.headers).toMatchObject(DOCUMENT_SECURITY_HEADERS)
    expect((await get(t, OUTBOX, adminHeaders)).statusCode).toBe(200)
  })

  test('signs in with the admin token: an HttpOnly, SameSite=Strict session cookie without the token, back to the page asked for', async ({
    t,
  }) => {
    const wrong = await signInPost(t, { token: 'guess', next: `${OUTBOX}/sms` })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.body).toContain('<p class="error" role="alert">The admin token is not right.</p>')
    expect(wrong.body).toContain(`name="next" value="${OUTBOX}/sms"`)
    expect(wrong.cookies).toEqual([])

    const right = await signInPost(t, { token: TEST_ADMIN_TOKEN, next: `${OUTBOX}/sms?page=2` })
    expect(right.statusCode).toBe(303)
    expect(right.headers.location).toBe(`${OUTBOX}/sms?page=2`)
    const [session] = right.cookies
    expect(session).toMatchObject({
      name: 'outbox_session',
      path: OUTBOX,
      httpOnly: true,
      sameSite: 'Strict',
      maxAge: SESSION_SECONDS,
    })
    expect(session?.secure).toBeUndefined()
    expect(session?.value).not.toContain(TEST_ADMIN_TOKEN)
    // The session's id alone: its expiry is kept on the server.
    expect(session?.value).toMatch(/^[\w-]{43}$/)
    const cookie = `outbox_session=${session?.value}`
    expect((await get(t, OUTBOX, { cookie })).statusCode).toBe(200)
    const behindBasicAuth = { cookie, authorization: `Basic ${Buffer.from('ops:proxy').toString('base64')}` }
    expect((await get(t, OUTBOX, behindBasicAuth)).statusCode).toBe(200)

    for (const elsewhere of [
      'https://evil.example/',
      '//evil.example',
      '/v1/admin/outboxes',
      `${OUTBOX}/../x`,
    ])
      expect((await signInPost(t, { token: TEST_ADMIN_TOKEN, next: elsewhere })).headers.location).toBe(
        OUTBOX,
      )
    const overHttps = await signInPost(t, { token: TEST_ADMIN_TOKEN }, { 'x-forwarded-proto': 'https' })
    expect(overHttps.cookies[0]?.secure).toBe(true)

    const out = await t.app.inject({
      method: 'POST',
      url: `${OUTBOX}/sign-out`,
      headers: { ...BROWSER, cookie },
    })
    expect(out.statusCode).toBe(303)
    expect(out.headers.location).toBe(OUTBOX)
    expect(out.cookies[0]).toMatchObject({ name: 'outbox_session', value: '', path: OUTBOX })
    expect(out.cookies[0]?.expires?.getTime()).toBeLessThan(Date.now())
  })

  test('signs out at once on every instance: a captured session cookie is refused after sign-out', async ({
    t,
  }) => {
    const captured = await signIn(t)
    const other = await anotherInstance(t)
    try {
      expect((await get(t, OUTBOX, captured)).statusCode).toBe(200)
      expect((await other.inject({ url: OUTBOX, headers: { ...BROWSER, ...captured } })).statusCode).toBe(200)
      const kept = await signIn(t)
      const out = await other.inject({
        method: 'POST',
        url: `${OUTBOX}/sign-out`,
        headers: { ...BROWSER, ...captured },
      })
      expect(out.statusCode).toBe(303)
      for (const app of [t.app, other]) {
        const replayed = await app.inject({ url: OUTBOX, headers: { ...BROWSER, ...captured } })
        expect(replayed.statusCode).toBe(401)
        expect(replayed.body).toContain('<form method="post" action="/v1/admin/outbox/sign-in">')
      }
      // Another browser's session goes on.
      expect((await get(t, OUTBOX, kept)).statusCode).toBe(200)
    } finally {
      await other.close()
    }
  })

  test('lists the sent mail of every account newest first, with to, subject, time, status and events', async ({
    t,
    owner,
    stranger,
  }) => {
    const session = await signIn(t)
    const list = await get(t, OUTBOX, session)
    expect(list.statusCode).toBe(200)
    expect(subjectsOf(list.body)).toEqual([
      '&lt;img src=x onerror=alert(1)&gt; &quot;Deal&quot; &amp; more',
      'Stranger news',
      'Your quote',
    ])
    expect(list.body).toContain('<caption class="muted">3 messages, newest first</caption>')
    const row = list.body.slice(list.body.indexOf(`/emails/${seeded.first._id}`) - 400)
    expect(row).toMatch(/<time datetime="\d{4}-\d\d-\d\dT[\d:.]+Z">[\d-]+ [\d:]+ UTC<\/time>/)
    expect(row).toContain('<td>Ada &lt;ada@example.com&gt;</td>')
    expect(row).toContain('(1 attached)')
    expect(row).toContain('<td>delivered</td><td>processed, delivered</td><td>OUTBOX</td>')
    expect(list.body).toContain('<td>kept in the outbox</td><td><span class="muted">none</span></td>')
    // Each line names its account: the page's accounts are read at once.
    expect(list.body).toContain(`>Owner</a>`)
    expect(list.body).toContain(`>Stranger</a>`)

    const strangers = await get(t, `${OUTBOX}?account_id=${stranger.accountId}`, session)
    expect(subjectsOf(strangers.body)).toEqual(['Stranger news'])
    expect(strangers.body).toContain('1 messages, newest first (account Stranger)')
    expect(strangers.body).toContain(`<a href="${OUTBOX}">All accounts</a>`)

    const second = await get(t, `${OUTBOX}?account_id=${owner.accountId}&limit=1&page=2`, session)
    expect(subjectsOf(second.body)).toEqual(['Your quote'])
    expect(second.body).toContain('<span>Page 2 of 2</span>')
    expect(second.body).toContain(`<a href="${OUTBOX}?account_id=${owner.accountId}&amp;limit=1">Newer</a>`)
    expect(second.body).not.toContain('>Older</a>')
  })

  test('opens a message: its addresses, events, text part, HTML in a sandboxed frame, and attachments that download', async ({
    t,
  }) => {
    const session = await signIn(t)
    const url = `${OUTBOX}/accounts/${seeded.first.account_id}/emails/${seeded.first._id}`
    const page = await get(t, url, session)
    expect(page.statusCode).toBe(200)
    expect(page.body).toContain('<h1>Your quote</h1>')
    for (const [name, value] of [
      ['From', 'Shop &lt;shop@example.com&gt;'],
      ['To', 'Ada &lt;ada@example.com&gt;'],
      ['Cc', 'boss@example.com'],
      ['Status', 'delivered'],
      ['Provider', 'OUTBOX'],
    ])
      expect(page.body).toContain(`<dt>${name}</dt><dd>${value}</dd>`)
    expect(page.body).toContain('<tr><td>delivered</td><td>ada@example.com</td>')
    expect(page.body).toContain('<h2>Text part</h2><pre>Here is your quote</pre>')
    expect(page.body).toContain(
      `<iframe sandbox src="${url}/html" title="HTML part" referrerpolicy="no-referrer"></iframe>`,
    )
    expect(page.body).not.toContain('<b>your quote</b>')
    expect(page.body).toContain(`<a href="${url}/attachments/0" download="quote.pdf">quote.pdf</a>`)

    const frame = await get(t, `${url}/html`, session)
    expect(frame.body).toBe(FIRST_HTML)
    expect(frame.headers['content-security-policy']).toMatch(/^sandbox; default-src 'none'; /)
    expect(frame.headers['content-security-policy']).not.toContain('script')
    const file = await get(t, `${url}/attachments/0`, session)
    expect(file.statusCode).toBe(200)
    expect(file.headers['content-type']).toBe('application/pdf')
    expect(file.headers['content-disposition']).toBe('attachment; filename="quote.pdf"')
    expect(file.body).toBe('%PDF-1.4 quote')
  })

  test('escapes everything a message carries; its HTML reaches only the sandboxed frame', async ({ t }) => {
    const session = await signIn(t)
    const url = `${OUTBOX}/accounts/${seeded.hostile.account_id}/emails/${seeded.hostile._id}`
    for (const body of [(await get(t, OUTBOX, session)).body, (await get(t, url, session)).body]) {
      expect(body).not.toMatch(/<script|<img/i)
      expect(body).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;Deal&quot; &amp; more')
      expect(body).toContain('Eve &lt;script&gt;x&lt;/script&gt; &lt;eve@example.com&gt;')
    }
    const page = (await get(t, url, session)).body
    expect(page).toContain('<title>&lt;img src=x onerror=alert(1)&gt; &quot;Deal&quot; &amp; more</title>')
    expect(page).toContain('<pre>&lt;/pre&gt;&lt;script&gt;alert(2)&lt;/script&gt;</pre>')
    expect(page).toContain('download="&#39;&gt;&lt;b onclick=alert(3)&gt;.txt"')
    const file = await get(t, `${url}/attachments/0`, session)
    expect(file.headers['content-disposition']).toMatch(/^attachment; /)
    expect(file.headers['content-security-policy']).toBe("sandbox; default-src 'none'")
  })

  test("answers 404 for a message under another account's id, or none", async ({ t, stranger }) => {
    const session = await signIn(t)
    const { first } = seeded
    const smsId = (await get(t, `${OUTBOX}/sms`, session)).body.match(/\/sms\/([0-9a-f]{24})"/)?.[1]
    const elsewhere = [
      `${OUTBOX}/accounts/${stranger.accountId}/emails/${first._id}`,
      `${OUTBOX}/accounts/${stranger.accountId}/emails/${first._id}/html`,
      `${OUTBOX}/accounts/${stranger.accountId}/emails/${first._id}/attachments/0`,
      `${OUTBOX}/accounts/${first.account_id}/emails/${first._id}/attachments/1`,
      `${OUTBOX}/accounts/${first.account_id}/emails/${seeded.strangers._id}`,
      `${OUTBOX}/accounts/${stranger.accountId}/sms/${smsId}`,
    ]
    for (const url of elsewhere) {
      const response = await get(t, url, session)
      expect(response.statusCode, url).toBe(404)
      expect(response.body).toContain('<h1>Not found</h1>')
    }
    expect(
      (await get(t, `${OUTBOX}/accounts/${seeded.sms.accountId}/sms/${smsId}`, session)).statusCode,
    ).toBe(200)
    // A message without an HTML part has no frame to open.
    const plain = `${OUTBOX}/accounts/${stranger.accountId}/emails/${seeded.strangers._id}`
    expect((await get(t, plain, session)).body).toContain('<h2>HTML part</h2><p class="muted">None.</p>')
    expect((await get(t, `${plain}/html`, session)).body).toContain('The message has no HTML part')
  })

  test('lists the review SMS of every account newest first, and opens one', async ({ t }) => {
    const session = await signIn(t)
    const list = await get(t, `${OUTBOX}/sms`, session)
    expect(list.statusCode).toBe(200)
    expect(list.body).toContain('<caption class="muted">1 SMS, newest first</caption>')
    expect(list.body).toContain(`<td>${seeded.sms.phone}</td>`)
    expect(list.body).toContain('Hi Grace, thanks for choosing Corner Bakery! Would you leave us a review?')
    expect(list.body).toContain('<td>kept in the outbox</td>')
    const url = list.body.match(
      /href="(\/v1\/admin\/outbox\/accounts\/[0-9a-f]{24}\/sms\/[0-9a-f]{24})"/,
    )?.[1]
    const sms = await get(t, url as string, session)
    expect(sms.body).toContain(`<h1>SMS to ${seeded.sms.phone}</h1>`)
    expect(sms.body).toMatch(/<pre>Hi Grace, thanks for choosing Corner Bakery! .+\/r\/[\w-]+<\/pre>/)
    expect(sms.body).toContain(`<dt>Account</dt><dd>Corner Bakery (${seeded.sms.accountId})</dd>`)
    const none = await get(t, `${OUTBOX}/sms?account_id=${seeded.first.account_id}`, session)
    expect(none.body).toContain('<p>No SMS for this account.</p>')
  })

  test("shows a record's own columns when its sender set them (a SendGrid record, no event yet)", async ({
    t,
    bystander,
  }) => {
    const record = await sentEmail(t.app.platform.db, bystander, '<p>Quote inside</p>')
    const session = await signIn(t)
    const list = await get(t, `${OUTBOX}?account_id=${bystander.accountId}`, session)
    expect(subjectsOf(list.body)).toEqual(['Your quote'])
    expect(list.body).toContain('<td>accepted</td><td><span class="muted">none</span></td><td>SENDGRID</td>')
    const frame = await get(t, `${OUTBOX}/accounts/${bystander.accountId}/emails/${record.id}/html`, session)
    expect(frame.body).toBe('<p>Quote inside</p>')
  })

  test('shows what a provider template was sent with', async ({ t, bystander }) => {
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${bystander.accountId}/credits`,
      headers: adminHeaders,
      payload: { amount: 1 },
    })
    const mail = await send(t, bystander, {
      subject: 'Templated',
      template_id: 'd-quote',
      dynamic_template_data: { first_name: '<Ada>' },
    })
    const session = await signIn(t)
    const page = await get(t, `${OUTBOX}/accounts/${bystander.accountId}/emails/${mail._id}`, session)
    expect(page.body).toContain("Sent with the provider's template <code>d-quote</code>")
    expect(page.body).toContain('&quot;first_name&quot;: &quot;&lt;Ada&gt;&quot;')
  })

  test('answers a client that does not ask for HTML in the error envelope, as the rest of the admin API', async ({
    t,
  }) => {
    const api = (url: string, headers: Record<string, string> = {}) => t.app.inject({ url, headers })
    expect((await api(OUTBOX)).json()).toEqual({
      success: false,
      errno: 401,
      message: 'Unauthorized',
      additional_info: 'sign in with the admin token',
    })
    expect((await api(`${OUTBOX}?account_id=nope`, adminHeaders)).json()).toMatchObject({
      errno: 400,
      message: 'account_id must be a 24-character hex id',
    })
    const elsewhere = `${OUTBOX}/accounts/${seeded.strangers.account_id}/emails/${seeded.first._id}`
    expect((await api(elsewhere, adminHeaders)).json()).toMatchObject({
      errno: 404,
      message: 'Communication not found',
    })
    const wrong = await t.app.inject({
      method: 'POST',
      url: `${OUTBOX}/sign-in`,
      payload: { token: 'guess' },
    })
    expect(wrong.statusCode).toBe(401)
    expect(wrong.json()).toMatchObject({ errno: 401, additional_info: 'invalid admin token' })
    // The pages themselves are HTML whatever the client asks for.
    const list = await api(OUTBOX, adminHeaders)
    expect(list.statusCode).toBe(200)
    expect(list.headers['content-type']).toBe('text/html; charset=utf-8')
  })

  test('counts wrong sign-ins with wrong admin bearers per address: past the limit a 429 page with Retry-After, the right token too; another address signs in', async ({
    t,
  }) => {
    const guesser = { 'x-forwarded-for': '198.51.100.23' }
    for (let guess = 1; guess < ADMIN_AUTH_FAILURES; guess++) {
      expect((await signInPost(t, { token: 'guess' }, guesser)).statusCode).toBe(401)
    }
    expect((await get(t, OUTBOX, { ...bearer('guess'), ...guesser })).statusCode).toBe(401)

    const blocked = await signInPost(t, { token: TEST_ADMIN_TOKEN }, guesser)
    expect(blocked.statusCode).toBe(429)
    const seconds = Number(blocked.headers['retry-after'])
    expect(seconds).toBeGreaterThan(0)
    expect(blocked.body).toContain(
      `<p class="error" role="alert">Too many wrong admin tokens from this address. Try again in ${seconds} seconds.</p>`,
    )
    expect(blocked.cookies).toEqual([])
    const asApi = await t.app.inject({ url: OUTBOX, headers: { ...adminHeaders, ...guesser } })
    expect(asApi.statusCode).toBe(429)
    expect(asApi.json()).toMatchObject({ errno: 429, additional_info: { retry_after: seconds } })

    const operator = { 'x-forwarded-for': '198.51.100.24' }
    expect((await signInPost(t, { token: TEST_ADMIN_TOKEN }, operator)).statusCode).toBe(303)
  })

  test('answers a bad parameter with a page naming the field', async ({ t }) => {
    const session = await signIn(t)
    const cases = [
      [`${OUTBOX}?account_id=nope`, 'account_id must be a 24-character hex id'],
      [`${OUTBOX}/sms?limit=1000`, 'limit must be &lt;= 100'],
      [
        `${OUTBOX}/accounts/${seeded.first.account_id}/emails/${seeded.first._id}/attachments/x`,
        'index must be integer',
      ],
    ]
    for (const [url, message] of cases) {
      const response = await get(t, url as string, session)
      expect(response.statusCode, url).toBe(400)
      expect(response.body).toContain(`<p class="error" role="alert">${message}</p>`)
    }
    const empty = await signInPost(t, {})
    expect(empty.statusCode).toBe(400)
    expect(empty.body).toContain('token is required')
  })
})

describe('the outbox pages in a real browser (headless Chromium)', () => {
  let browser: Browser
  let page: Page
  let baseUrl: string

  test.beforeAll(async ({ t }) => {
    browser = await launchChromium()
    // The file's app, listening as well: the pages use paths only, whatever PUBLIC_BASE_URL says.
    baseUrl = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const context = await browser.newContext()
    // Well inside the test's own timeout, so that a missing element fails with its locator named.
    context.setDefaultTimeout(10_000)
    page = await context.newPage()
  })
  test.afterAll(async () => {
    await browser?.close()
  })

  test('signs in, lists, opens a message with its HTML sandboxed, its text and a download, and lists SMS', async () => {
    await page.goto(`${baseUrl}${OUTBOX}`)
    await page.getByLabel('Admin token').fill(TEST_ADMIN_TOKEN)
    await page.getByRole('button', { name: 'Sign in' }).click()

    await page.getByRole('heading', { name: 'Sent email' }).waitFor()
    const row = page.getByRole('row').filter({ hasText: 'Your quote (1 attached)' })
    expect(await row.getByRole('cell').allInnerTexts()).toEqual([
      expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/),
      'Owner',
      'Shop <shop@example.com>',
      'Ada <ada@example.com>',
      'Your quote (1 attached)',
      'delivered',
      'processed, delivered',
      'OUTBOX',
    ])

    await row.getByRole('link', { name: 'Your quote' }).click()
    await page.getByRole('heading', { name: 'Your quote' }).waitFor()
    const frame = page.frameLocator('iframe[title="HTML part"]')
    await frame.getByText('Here is your quote').waitFor()
    expect(await frame.locator('b').innerText()).toBe('your quote')
    expect(await frame.locator('#check').innerText()).toBe('The script did not run.')
    expect(await page.locator('iframe').getAttribute('sandbox')).toBe('')
    expect(await page.locator('pre').innerText()).toBe('Here is your quote')

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('link', { name: 'quote.pdf' }).click(),
    ])
    expect(download.suggestedFilename()).toBe('quote.pdf')
    expect(await readFile(await download.path(), 'utf8')).toBe('%PDF-1.4 quote')

    await page.getByRole('link', { name: 'SMS', exact: true }).click()
    await page.getByRole('heading', { name: 'Sent SMS' }).waitFor()
    const sms = page.getByRole('row').filter({ hasText: seeded.sms.phone })
    expect(await sms.getByRole('cell').nth(1).innerText()).toBe('Corner Bakery')
    expect(await sms.getByRole('link').last().innerText()).toMatch(
      /^Hi Grace, thanks for choosing Corner Bakery!/,
    )
    expect(await sms.getByRole('cell').last().innerText()).toBe('kept in the outbox')
  })
})

describe('the outbox lists past the pages an offset reaches', () => {
  /** Each line's message id, in the order shown. */
  const idsOf = (body: string) =>
    [
      ...body.matchAll(/href="\/v1\/admin\/outbox\/accounts\/[0-9a-f]{24}\/(?:emails|sms)\/([0-9a-f]{24})"/g),
    ].map((match) => match[1] as string)
  const olderLink = (body: string) =>
    body.match(/<a href="([^"]+)">Older<\/a>/)?.[1]?.replaceAll('&amp;', '&')

  /** The lines of the list at `url`, then of each page its Older link leads to, to the last. */
  async function walkOlder(t: TestApp, url: string, session: { cookie: string }) {
    const ids: string[] = []
    for (let next: string | undefined = url; next; ) {
      const page = await get(t, next, session)
      expect(page.statusCode, page.body).toBe(200)
      ids.push(...idsOf(page.body))
      next = olderLink(page.body)
    }
    return ids
  }

  /** Mail of the account, written straight into the table: pairs share a microsecond, every third a reply. */
  const insertMail = (t: TestApp, accountId: string, prefix: string, count: number) =>
    t.app.platform.db.execute(sql`insert into communications (id, account_id, type, module, success, subject, created_at)
      select ${prefix} || lpad(to_hex(n), 20, '0'), ${accountId},
        case when n % 3 = 0 then 'INCOMING' else 'OUTGOING' end, 'OUTBOX', true, 'Bulk ' || n,
        timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'
      from generate_series(1, ${count}::int) as n`)

  test('reads every sent email once by cursor, of one account and of all', async ({ t }) => {
    const session = await signIn(t)
    const tenant = await createTenant(t.app, { name: 'Bulk sender' })
    await insertMail(t, tenant.accountId, '0000', 23)
    const outgoing = Array.from({ length: 23 }, (_, i) => 23 - i).filter((n) => n % 3 !== 0)
    const first = await get(t, `${OUTBOX}?account_id=${tenant.accountId}&limit=5&cursor=`, session)
    expect(first.body).toContain(`<a href="${OUTBOX}?account_id=${tenant.accountId}&amp;limit=5">Newest</a>`)
    expect(first.body).toContain(
      '<caption class="muted">messages, newest first (account Bulk sender)</caption>',
    )
    expect(await walkOlder(t, `${OUTBOX}?account_id=${tenant.accountId}&limit=5&cursor=`, session)).toEqual(
      outgoing.map((n) => `0000${n.toString(16).padStart(20, '0')}`),
    )
    const { rows } = (await t.app.platform.db.execute(
      sql`select id from communications where type = 'OUTGOING' order by created_at desc, id desc`,
    )) as unknown as { rows: { id: string }[] }
    expect(await walkOlder(t, `${OUTBOX}?limit=7&cursor=`, session)).toEqual(rows.map((row) => row.id))
  })

  test('counts up to the cap, then reads on by cursor past the last numbered page', async ({ t }) => {
    const session = await signIn(t)
    const tenant = await createTenant(t.app, { name: 'Very bulk sender' })
    // Two in three are sent mail: 1,050 of them.
    await insertMail(t, tenant.accountId, '0001', ((LIST_TOTAL_CAP + 50) * 3) / 2)
    const list = `${OUTBOX}?account_id=${tenant.accountId}&limit=100`
    const last = await get(t, `${list}&page=10`, session)
    expect(last.body).toContain('<caption class="muted">1000+ messages, newest first')
    expect(last.body).toContain('<span>Page 10 of 10+</span>')
    const older = olderLink(last.body) as string
    expect(older).toMatch(/[?&]cursor=[\w-]+/)
    const beyond = await get(t, older, session)
    expect(idsOf(beyond.body)).toHaveLength(50)
    expect((idsOf(beyond.body)[0] as string) < (idsOf(last.body).at(-1) as string)).toBe(true)
    expect(olderLink(beyond.body)).toBeUndefined()
    await expectListRefusals(t.app, `${OUTBOX}?account_id=${tenant.accountId}`, adminHeaders, 100)
    const refused = await get(t, `${list}&page=101`, session)
    expect(refused.statusCode).toBe(400)
    expect(refused.body).toContain('page must be &lt;= 100 with limit 100')
  })

  test('reads every review SMS once by cursor', async ({ t }) => {
    const session = await signIn(t)
    const { rows } = (await t.app.platform.db.execute(
      sql`select id, account_id from review_requests limit 1`,
    )) as unknown as { rows: { id: string; account_id: string }[] }
    const request = rows[0] as { id: string; account_id: string }
    await t.app.platform.db.execute(sql`insert into review_sms_messages (id, account_id, request_id, "to", body, provider, created_at)
      select '0002' || lpad(to_hex(n), 20, '0'), ${request.account_id}, ${request.id}, '+14155550100',
        'Bulk ' || n, 'outbox', timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'
      from generate_series(1, 11) as n`)
    const bulk = Array.from({ length: 11 }, (_, i) => `0002${(11 - i).toString(16).padStart(20, '0')}`)
    const walked = await walkOlder(
      t,
      `${OUTBOX}/sms?account_id=${request.account_id}&limit=4&cursor=`,
      session,
    )
    // The review's own SMS, sent now, comes first.
    expect(walked.slice(1)).toEqual(bulk)
    await expectListRefusals(t.app, `${OUTBOX}/sms`, adminHeaders, 100)
  })
})
