import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import type { Tenant } from '../../../test/helpers/fixtures.js'
import {
  chargeFor,
  expectOnlyOwnerSees,
  reviewingTenant,
  sendRequestOfCharge,
  twilioPost,
} from '../../../test/helpers/reviews.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { Forbidden } from '../../platform/http/errors.js'
import { PHONE_MAX_LENGTH, TEXT_MAX_LENGTH } from '../../platform/http/schemas.js'
import { EMPTY_TWIML, verifyTwilioRequest } from './sms-opt-outs.service.js'
import { isTwilioSignatureValid, twilioSignature } from './twilio.js'

const STRIPE_SECRET = 'whsec_test_sms_opt_outs'
const AUTH_TOKEN = 'twilio-auth-token-opt-outs'
const PUBLIC_BASE_URL = 'https://platform.example.com'
// SMS_PROVIDER unset: the outbox, the default; the auth token still verifies Twilio's webhooks.
test.override('appEnv', {
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  PUBLIC_BASE_URL,
  TWILIO_AUTH_TOKEN: AUTH_TOKEN,
})

const ACCOUNT_FROM = '+15550001111'
const OTHER_ACCOUNT_FROM = '+15550002222'

/** A customer's reply as Twilio posts it, signed; `To` is left out when null. */
function reply(from: string, body: string, to: string | null = ACCOUNT_FROM, path?: string) {
  const params: Record<string, string> = {
    MessageSid: `SM${'2'.repeat(32)}`,
    AccountSid: `AC${'2'.repeat(32)}`,
    From: from,
    Body: body,
    NumMedia: '0',
    ...(to && { To: to }),
  }
  return twilioPost(AUTH_TOKEN, PUBLIC_BASE_URL, params, path)
}

/** A tenant asking for reviews by SMS from its own number, that has texted each of `phones`. */
async function tenantThatTexted(t: TestApp, from: string, phones: string[]) {
  const tenant = await reviewingTenant(t, { send_method: 'sms', delay_hours: 1, from_phone: from })
  for (const phone of phones) {
    const request = await sendRequestOfCharge(t, STRIPE_SECRET, tenant, chargeFor(tenant, { phone }))
    expect(request.status).toBe('sent')
  }
  return tenant
}

const optOutsOf = async (t: TestApp, tenant: Tenant, query = '') => {
  const response = await t.app.inject({ url: `/reviews/sms-opt-outs?${query}`, headers: tenant.headers })
  expect(response.statusCode).toBe(200)
  return response.json() as {
    data: { _id: string; account_id: string; phone: string; keyword: string; created_at: string }[]
    pagination: { total: number; page: number; limit: number; pages: number }
  }
}

const phonesOptedOut = async (t: TestApp, tenant: Tenant) =>
  (await optOutsOf(t, tenant)).data.map((optOut) => optOut.phone).sort()

describe("Twilio's webhook signature", () => {
  // Twilio's documented example ("Webhooks security", its validateRequest snippets): token, URL, parameters, signature.
  const documented = {
    authToken: '12345',
    url: 'https://mycompany.com/myapp.php?foo=1&bar=2',
    params: {
      CallSid: 'CA1234567890ABCDE',
      Caller: '+14158675310',
      Digits: '1234',
      From: '+14158675310',
      To: '+18005551212',
    },
    signature: 'GvWf1cFY/Q7PnoempGyD5oXAezc=',
  }

  test("is computed as Twilio's documented example computes it", () => {
    expect(twilioSignature(documented.authToken, documented.url, documented.params)).toBe(
      documented.signature,
    )
    expect(isTwilioSignatureValid(documented.authToken, documented.signature, documented)).toBe(true)
  })

  test('is refused when wrong, for another URL or parameter, or without an auth token to check it', () => {
    const { authToken, signature, url, params } = documented
    expect(isTwilioSignatureValid(authToken, 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', documented)).toBe(false)
    expect(isTwilioSignatureValid(authToken, `${signature}=`, documented)).toBe(false)
    expect(isTwilioSignatureValid(authToken, signature, { url: `${url}&baz=3`, params })).toBe(false)
    expect(isTwilioSignatureValid(authToken, signature, { url, params: { ...params, Digits: '4321' } })).toBe(
      false,
    )
    expect(isTwilioSignatureValid(undefined, signature, documented)).toBe(false)
    expect(() =>
      verifyTwilioRequest(
        { authToken: undefined, publicBaseUrl: 'https://mycompany.com' },
        { pathAndQuery: '/myapp.php?foo=1&bar=2', signature, params },
      ),
    ).toThrow(Forbidden)
  })
})

describe('POST /reviews/webhook/sms/inbound', () => {
  test('refuses a missing, wrong or tampered signature, or one for another URL, with 403; nothing stored', async ({
    t,
  }) => {
    const phone = '+14155552001'
    const tenant = await tenantThatTexted(t, ACCOUNT_FROM, [phone])
    const signed = reply(phone, 'STOP')
    const { 'x-twilio-signature': _, ...unsigned } = signed.headers
    const refused = [
      { ...signed, headers: unsigned },
      { ...signed, headers: { ...signed.headers, 'x-twilio-signature': 'AAAAAAAAAAAAAAAAAAAAAAAAAAA=' } },
      { ...reply(phone, 'HELLO'), payload: signed.payload },
      { ...reply(phone, 'STOP', ACCOUNT_FROM, '/v1/reviews/webhook/sms/inbound'), url: signed.url },
      twilioPost('someone-elses-token', PUBLIC_BASE_URL, { From: phone, Body: 'STOP', To: ACCOUNT_FROM }),
    ]
    for (const post of refused) {
      const response = await t.app.inject(post)
      expect(response.statusCode).toBe(403)
      expect(response.json()).toMatchObject({ success: false, message: 'Invalid X-Twilio-Signature' })
    }
    const asJson = await t.app.inject({
      ...signed,
      headers: { ...signed.headers, 'content-type': 'application/json' },
    })
    expect(asJson.statusCode).toBe(415)
    expect(await phonesOptedOut(t, tenant)).toEqual([])
  })

  // A signed post is still bounded field by field; Twilio's own are far shorter.
  test('refuses a signed reply whose number or text is past its bound, naming the field; nothing stored', async ({
    t,
  }) => {
    const phone = '+14155552009'
    const tenant = await tenantThatTexted(t, ACCOUNT_FROM, [phone])
    const tooLong = [
      [
        reply(`+1${'5'.repeat(PHONE_MAX_LENGTH)}`, 'STOP'),
        `From must be at most ${PHONE_MAX_LENGTH} characters long`,
      ],
      [
        reply(phone, `STOP${' '.repeat(TEXT_MAX_LENGTH)}`),
        `Body must be at most ${TEXT_MAX_LENGTH} characters long`,
      ],
    ] as const
    for (const [post, message] of tooLong) {
      const response = await t.app.inject(post)
      expect(response.statusCode).toBe(400)
      expect(response.json().message).toBe(message)
    }
    expect(await phonesOptedOut(t, tenant)).toEqual([])
  })

  test('the outbox, the default, keeps each SMS with the number as digits and +', async ({ t }) => {
    const tenant = await reviewingTenant(t, { send_method: 'sms', delay_hours: 1 })
    const request = await sendRequestOfCharge(
      t,
      STRIPE_SECRET,
      tenant,
      chargeFor(tenant, { name: 'Ada', phone: '+1 415-555-2002' }),
    )
    expect(request.status).toBe('sent')
    const result = await t.app.platform.db.execute(
      sql`select account_id, "to", "from", body, provider, provider_id from review_sms_messages where request_id = ${request._id}`,
    )
    const rows = (result as unknown as { rows: Record<string, string | null>[] }).rows
    expect(rows).toEqual([
      {
        account_id: tenant.accountId,
        to: '+14155552002',
        from: null,
        body: expect.stringMatching(
          /^Hi Ada, thanks for choosing Corner Bakery!.* https:\/\/platform\.example\.com\/r\//,
        ),
        provider: 'outbox',
        provider_id: null,
      },
    ])
  })

  test("Twilio's opt-out keywords, trimmed and in any case, opt out once; START, UNSTOP, YES opt back in", async ({
    t,
  }) => {
    const phone = '+14155552003'
    const tenant = await tenantThatTexted(t, ACCOUNT_FROM, [phone])
    for (const text of ['stop please', 'HELP', 'Thanks!', 'STOP STOP']) {
      const response = await t.app.inject(reply(phone, text))
      expect(response.statusCode).toBe(200)
      expect(response.body).toBe(EMPTY_TWIML)
    }
    expect(await phonesOptedOut(t, tenant)).toEqual([])

    for (const optIn of ['START', ' unstop', 'Yes']) {
      for (const keyword of ['STOP', 'stopall', ' Unsubscribe ', 'CANCEL', 'end', 'Quit\n']) {
        const response = await t.app.inject(reply(phone, keyword))
        expect(response.statusCode).toBe(200)
        expect(response.headers['content-type']).toMatch(/^text\/xml/)
        expect(response.body).toBe(EMPTY_TWIML)
      }
      const { data } = await optOutsOf(t, tenant)
      expect(data).toEqual([
        {
          _id: expect.any(String),
          account_id: tenant.accountId,
          phone,
          keyword: 'STOP',
          created_at: expect.any(String),
        },
      ])
      expect(
        (await t.app.inject(reply(phone, optIn, ACCOUNT_FROM, '/v1/reviews/webhook/sms/inbound'))).body,
      ).toBe(EMPTY_TWIML)
      expect(await phonesOptedOut(t, tenant)).toEqual([])
    }
  })

  test('opts out the accounts that texted the number from the number replied to; without To, all of them', async ({
    t,
  }) => {
    const phone = '+14155552004'
    const tenant = await tenantThatTexted(t, ACCOUNT_FROM, [phone])
    const other = await tenantThatTexted(t, OTHER_ACCOUNT_FROM, [phone])
    const unrelated = await tenantThatTexted(t, ACCOUNT_FROM, ['+14155552005'])

    await t.app.inject(reply(phone, 'STOP', ACCOUNT_FROM))
    expect(await phonesOptedOut(t, tenant)).toEqual([phone])
    expect(await phonesOptedOut(t, other)).toEqual([])

    await t.app.inject(reply(phone, 'STOP', null))
    expect(await phonesOptedOut(t, other)).toEqual([phone])
    expect(await phonesOptedOut(t, unrelated)).toEqual([])

    await t.app.inject(reply(phone, 'START', OTHER_ACCOUNT_FROM))
    expect(await phonesOptedOut(t, other)).toEqual([])
    expect(await phonesOptedOut(t, tenant)).toEqual([phone])
  })
})

describe('GET /reviews/sms-opt-outs', () => {
  test("pages the account's opted-out numbers, newest first, by phone in any format; never another's", async ({
    t,
    stranger,
  }) => {
    const phones = ['+14155552006', '+14155552007']
    const tenant = await tenantThatTexted(t, ACCOUNT_FROM, phones)
    for (const phone of phones) await t.app.inject(reply(phone, 'STOP'))

    const first = await optOutsOf(t, tenant, 'limit=1')
    expect(first.pagination).toEqual({ total: 2, page: 1, limit: 1, pages: 2 })
    expect(first.data.map((optOut) => optOut.phone)).toEqual(['+14155552007'])
    expect((await optOutsOf(t, tenant, 'limit=1&page=2')).data.map((optOut) => optOut.phone)).toEqual([
      '+14155552006',
    ])
    const byPhone = await optOutsOf(t, tenant, `phone=${encodeURIComponent('+1 (415) 555-2006')}`)
    expect(byPhone.data.map((optOut) => optOut.phone)).toEqual(['+14155552006'])

    const v1 = await t.app.inject({ url: '/v1/reviews/sms-opt-outs', headers: tenant.headers })
    expect(v1.json().pagination.total).toBe(2)
    const list = { method: 'GET' as const, url: '/reviews/sms-opt-outs' }
    await expectOnlyOwnerSees(t, list, tenant, stranger, '+14155552006')
    expect((await optOutsOf(t, stranger, 'phone=%2B14155552006')).data).toEqual([])
    expect((await t.app.inject({ url: '/reviews/sms-opt-outs' })).statusCode).toBe(401)
    expect(
      (await t.app.inject({ url: '/reviews/sms-opt-outs?limit=0', headers: tenant.headers })).statusCode,
    ).toBe(400)
  })
})
