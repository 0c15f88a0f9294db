import { describe, expect } from 'vitest'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import { createUser, obtainTokens, registerApp } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

test.override('appEnv', { RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' })

const get = (t: TestApp, url: string, token: string) => t.app.inject({ url, headers: bearer(token) })

describe('API routes called with OAuth access tokens', () => {
  let contactId: string
  let contactsToken: string
  let sitesToken: string

  test.beforeAll(async ({ t, owner, stranger }) => {
    await createUser(t.app, 'owner@api.example', [owner.accountId])
    const contact = async (accountId: string, email: string) =>
      (
        await t.app.inject({
          method: 'POST',
          url: `/v1/admin/accounts/${accountId}/contacts`,
          headers: adminHeaders,
          payload: { email },
        })
      ).json().data._id as string
    contactId = await contact(owner.accountId, 'mine@example.com')
    await contact(stranger.accountId, 'theirs@example.com')
    const reader = await registerApp(t.app, { scopes: ['crm.contacts.read', 'sites.read'] })
    contactsToken = (await obtainTokens(t.app, reader, 'owner@api.example')).access_token
    sitesToken = (await obtainTokens(t.app, reader, 'owner@api.example', 'sites.read')).access_token
  })

  test('reads contacts with crm.contacts.read, in the account the user chose only', async ({ t }) => {
    const list = await get(t, '/v1/contacts', contactsToken)
    expect(list.statusCode).toBe(200)
    expect(list.json().data.map((c: { email: string }) => c.email)).toEqual(['mine@example.com'])
    expect((await get(t, `/v1/contacts/${contactId}`, contactsToken)).json().data.email).toBe(
      'mine@example.com',
    )
  })

  test('answers 403 insufficient_scope to a token without the route scope, and on routes with none', async ({
    t,
  }) => {
    const refused = await get(t, '/v1/contacts', sitesToken)
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toEqual({
      success: false,
      errno: 403,
      message: 'insufficient_scope',
      additional_info: { error: 'insufficient_scope', scope: 'crm.contacts.read' },
    })
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer error="insufficient_scope", scope="crm.contacts.read"',
    )
    const noScope = await get(t, '/v1/e/mailprovider/dnd', contactsToken)
    expect(noScope.statusCode).toBe(403)
    expect(noScope.json().message).toBe('insufficient_scope')
    // Reading contacts does not allow changing them: that takes crm.contacts.write.
    const write = await t.app.inject({
      method: 'POST',
      url: '/v1/contacts',
      headers: bearer(contactsToken),
      payload: { email: 'written@example.com' },
    })
    expect(write.statusCode).toBe(403)
    expect(write.json().additional_info).toEqual({ error: 'insufficient_scope', scope: 'crm.contacts.write' })
  })

  test('refuses a forged or tampered access token with 401 naming the Bearer scheme (RFC 6750 3)', async ({
    t,
    stranger,
  }) => {
    const [header, payload, signature] = contactsToken.split('.') as [string, string, string]
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString())
    const forged = Buffer.from(JSON.stringify({ ...claims, account_id: stranger.accountId })).toString(
      'base64url',
    )
    for (const refused of [
      await get(t, '/v1/contacts', `${header}.${forged}.${signature}`),
      await get(t, '/v1/contacts', `${header}.${payload}.AAAA`),
    ]) {
      expect(refused.statusCode).toBe(401)
      expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    }
  })

  test('limits an app to its hourly allowance in the account across routes (1,000 on the basic tier)', async ({
    t,
    owner,
  }) => {
    const busy = await registerApp(t.app, { scopes: ['crm.contacts.read'] })
    const token = (await obtainTokens(t.app, busy, 'owner@api.example')).access_token
    const missing = '/v1/contacts/0123456789abcdef01234567'
    for (let i = 0; i < 1000; i++) {
      expect((await get(t, i % 2 ? missing : '/v1/contacts?limit=1', token)).statusCode).toBe(
        i % 2 ? 404 : 200,
      )
    }
    const limited = await get(t, '/v1/contacts', token)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ success: false, errno: 429 })
    // RFC 6585 4: when to come back, the seconds until the hour frees a call.
    const retryAfter = Number(limited.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(3600)
    expect(limited.json().additional_info).toEqual({ retry_after: retryAfter })
    // Another app in the same account, and the account's own platform token, keep their allowance.
    expect((await get(t, '/v1/contacts', contactsToken)).statusCode).toBe(200)
    expect((await get(t, '/v1/contacts', owner.token)).statusCode).toBe(200)
  })
})
