import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { startFakeTwilio } from '../../../test/fakes/twilio.js'
import type { TestApp } from '../../../test/helpers/app.js'
import type { Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import {
  chargeFor,
  createReviewTemplate,
  putConfiguration,
  REVIEW_CONFIGURATION,
  reviewingTenant,
  sendRequestOfCharge,
  twilioPost,
} from '../../../test/helpers/reviews.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import { SEND_REQUEST_JOB } from './jobs.js'

const STRIPE_SECRET = 'whsec_test_sms_sending'
const ACCOUNT_SID = `AC${'5'.repeat(32)}`
const AUTH_TOKEN = 'twilio-auth-token-for-tests'
const DEFAULT_SENDER = '+15005550006'
const PUBLIC_BASE_URL = 'https://platform.example.com'

const test = base.extend(
  'twilio',
  { scope: 'file' },
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from its pattern
  async ({}, { onCleanup }) => {
    const fake = await startFakeTwilio({ accountSid: ACCOUNT_SID, authToken: AUTH_TOKEN })
    onCleanup(() => fake.close())
    return fake
  },
)
test.override('appEnv', ({ twilio }) => ({
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  PUBLIC_BASE_URL,
  SMS_PROVIDER: 'twilio',
  TWILIO_ACCOUNT_SID: ACCOUNT_SID,
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
  TWILIO_FROM: DEFAULT_SENDER,
  TWILIO_BASE_URL: twilio.url,
}))

let phones = 0
/** A customer's number as they type it, and as it is kept and sent (digits and '+'). */
function customerPhone() {
  phones++
  const digits = String(1000 + phones)
  return { typed: `+1 (415) 555-${digits}`, e164: `+1415555${digits}` }
}

/** A tenant that asks for Google reviews by SMS, with a template using both areas' variables. */
async function smsTenant(t: TestApp, configuration: object = {}) {
  const settings = { ...REVIEW_CONFIGURATION, send_method: 'sms', delay_hours: 1, ...configuration }
  const tenant = await reviewingTenant(t, settings)
  const templateId = await createReviewTemplate(t, tenant, {
    channel: 'sms',
    body: 'Hi {{contact.name}} ({{customer.name}}), thanks from {{business.name}}: {{review.link}}',
  })
  expect((await putConfiguration(t, tenant, { ...settings, template_id: templateId })).statusCode).toBe(200)
  return tenant
}

/** The review SMS kept for the request. */
async function smsOf(t: TestApp, requestId: string) {
  const result = await t.app.platform.db.execute(
    sql`select "to", "from", body, provider, provider_id from review_sms_messages where request_id = ${requestId}`,
  )
  return (result as unknown as { rows: Record<string, string | null>[] }).rows
}

const reply = (from: string, body: string) =>
  twilioPost(AUTH_TOKEN, PUBLIC_BASE_URL, {
    ToCountry: 'US',
    SmsMessageSid: `SM${'1'.repeat(32)}`,
    NumMedia: '0',
    SmsSid: `SM${'1'.repeat(32)}`,
    SmsStatus: 'received',
    Body: body,
    To: DEFAULT_SENDER,
    NumSegments: '1',
    MessageSid: `SM${'1'.repeat(32)}`,
    AccountSid: ACCOUNT_SID,
    From: from,
    ApiVersion: '2010-04-01',
  })

const optOutsOf = async (t: TestApp, tenant: Tenant) =>
  (await t.app.inject({ url: '/reviews/sms-opt-outs', headers: tenant.headers })).json().data as {
    phone: string
    keyword: string
  }[]

describe('review requests by SMS through Twilio', () => {
  test("goes to Twilio's Messages API form-encoded with Basic auth; the tracked link, the names and Twilio's id", async ({
    t,
    twilio,
  }) => {
    const tenant = await smsTenant(t)
    const phone = customerPhone()
    const request = await sendRequestOfCharge(
      t,
      STRIPE_SECRET,
      tenant,
      chargeFor(tenant, { name: 'Grace Hopper', phone: phone.typed }),
    )
    expect(request).toMatchObject({ status: 'sent', reason: null })

    const call = twilio.requests.at(-1)
    expect(call?.method).toBe('POST')
    expect(call?.url).toBe(`/2010-04-01/Accounts/${ACCOUNT_SID}/Messages.json`)
    expect(call?.headers.authorization).toBe(
      `Basic ${Buffer.from(`${ACCOUNT_SID}:${AUTH_TOKEN}`).toString('base64')}`,
    )
    expect(call?.headers['content-type']).toBe('application/x-www-form-urlencoded')
    const form = new URLSearchParams(call?.body)
    expect(form.get('To')).toBe(phone.e164)
    expect(form.get('From')).toBe(DEFAULT_SENDER)
    const body = form.get('Body') ?? ''
    expect(body).toMatch(
      /^Hi Grace Hopper \(Grace Hopper\), thanks from Corner Bakery: https:\/\/platform\.example\.com\/r\/[\w-]{12}$/,
    )

    const code = body.slice(body.lastIndexOf('/') + 1)
    const click = await t.app.inject({ url: `/r/${code}` })
    expect(click.headers.location).toBe('https://g.page/r/corner-bakery/review')
    const [message] = twilio.messages.slice(-1)
    expect(await smsOf(t, request._id)).toEqual([
      {
        to: phone.e164,
        from: DEFAULT_SENDER,
        body,
        provider: 'twilio',
        provider_id: message?.sid,
      },
    ])
    expect(message?.sid).toMatch(/^SM[0-9a-f]{32}$/)
  })

  test('a send job run again after its process died texts once: Twilio is asked what it took', async ({
    t,
    twilio,
  }) => {
    const tenant = await smsTenant(t)
    const texted = async (gotByTwilio: boolean) => {
      const request = await sendRequestOfCharge(
        t,
        STRIPE_SECRET,
        tenant,
        chargeFor(tenant, { phone: customerPhone().typed }),
      )
      const first = twilio.messages.at(-1)
      if (!gotByTwilio) twilio.messages.pop()
      // What a process killed between Twilio's answer and the record leaves: the claim, the job still to do.
      await t.app.platform.db.execute(sql`delete from review_sms_messages where request_id = ${request._id}`)
      await t.app.platform.db.execute(sql`update review_sms_send_keys set recorded_at = null,
        claimed_at = now() - interval '1 hour' where key = ${`review-request:${request._id}`}`)
      await t.app.platform.db.execute(sql`update review_requests set status = 'scheduled', sent_at = null
        where id = ${request._id}`)
      const count = twilio.messages.length
      await t.app.platform.db.execute(sql`update jobs.job set state = 'created', start_after = now()
        where name = ${SEND_REQUEST_JOB} and data ->> 'request_id' = ${request._id}`)
      await eventually(async () => expect((await smsOf(t, request._id)).length).toBe(1))
      return { first, again: twilio.messages.slice(count), kept: (await smsOf(t, request._id))[0] }
    }

    const taken = await texted(true)
    expect(taken.again).toEqual([])
    expect(taken.kept?.provider_id).toBe(taken.first?.sid)
    const lost = await texted(false)
    expect(lost.again).toHaveLength(1)
    expect(lost.kept?.provider_id).toBe(lost.again[0]?.sid)
  })

  test('Twilio refusing the number (21610, it replied STOP to Twilio) skips the request as opted_out', async ({
    t,
    twilio,
  }) => {
    const tenant = await smsTenant(t)
    const phone = customerPhone()
    twilio.unsubscribed.add(phone.e164)
    const sent = twilio.messages.length
    const request = await sendRequestOfCharge(
      t,
      STRIPE_SECRET,
      tenant,
      chargeFor(tenant, { phone: phone.typed }),
    )
    expect(request).toMatchObject({ status: 'skipped', reason: 'opted_out' })
    expect(twilio.messages).toHaveLength(sent)
    expect(await smsOf(t, request._id)).toEqual([])
  })

  test('a STOP reply opts the number out: its next request is skipped untexted; START opts it back in', async ({
    t,
    twilio,
  }) => {
    const tenant = await smsTenant(t)
    const phone = customerPhone()
    // Each request is for another customer (email) on the same phone, so the 30-day limit does not apply.
    const charge = (n: number) => chargeFor(tenant, { email: `shared${n}@example.com`, phone: phone.typed })
    expect((await sendRequestOfCharge(t, STRIPE_SECRET, tenant, charge(1))).status).toBe('sent')

    const stop = await t.app.inject(reply(phone.e164, ' Stop '))
    expect(stop.statusCode).toBe(200)
    expect(stop.headers['content-type']).toMatch(/^text\/xml/)
    expect(stop.body).toBe('<?xml version="1.0" encoding="UTF-8"?><Response></Response>')
    expect(await optOutsOf(t, tenant)).toMatchObject([{ phone: phone.e164, keyword: 'STOP' }])

    const texted = twilio.messages.length
    const skipped = await sendRequestOfCharge(t, STRIPE_SECRET, tenant, charge(2))
    expect(skipped).toMatchObject({ status: 'skipped', reason: 'opted_out' })
    expect(twilio.messages).toHaveLength(texted)

    expect((await t.app.inject(reply(phone.e164, 'start'))).statusCode).toBe(200)
    expect(await optOutsOf(t, tenant)).toEqual([])
    expect((await sendRequestOfCharge(t, STRIPE_SECRET, tenant, charge(3))).status).toBe('sent')
    expect(twilio.messages.at(-1)?.to).toBe(phone.e164)
  })

  test('sent by both: a customer who opted out of SMS still gets the email, and the request is sent', async ({
    t,
    twilio,
  }) => {
    const tenant = await smsTenant(t, { send_method: 'both' })
    const phone = customerPhone()
    twilio.unsubscribed.add(phone.e164)
    const request = await sendRequestOfCharge(
      t,
      STRIPE_SECRET,
      tenant,
      chargeFor(tenant, { email: 'both@example.com', phone: phone.typed }),
    )
    expect(request).toMatchObject({ status: 'sent', reason: null })
    const mail = await t.app.inject({ url: '/v1/e/mailprovider/communications', headers: tenant.headers })
    expect(JSON.stringify(mail.json().data)).toContain('both@example.com')
    expect(await smsOf(t, request._id)).toEqual([])
  })
})

describe('review requests by email', () => {
  test("a customer on the account's do-not-disturb list is skipped as opted_out, not failed", async ({
    t,
  }) => {
    const tenant = await reviewingTenant(t)
    const dnd = await t.app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/dnd',
      headers: tenant.headers,
      payload: { value: 'quiet@example.com' },
    })
    expect(dnd.statusCode).toBe(201)
    const charge = chargeFor(tenant, { email: 'quiet@example.com' })
    const request = await sendRequestOfCharge(t, STRIPE_SECRET, tenant, charge)
    expect(request).toMatchObject({ status: 'skipped', reason: 'opted_out', sent_at: null })
  })
})
