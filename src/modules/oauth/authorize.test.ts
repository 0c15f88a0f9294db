import { randomBytes } from 'node:crypto'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { describe, expect } from 'vitest'
import {
  browser,
  CALLBACK,
  createUser,
  flowOf,
  PASSWORD,
  redirected,
  registerApp,
} from '../../../test/helpers/oauth.js'
import { DOCUMENT_SECURITY_HEADERS } from '../../../test/helpers/security-headers.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * The authorization pages: sign-in, account choice, consent, and the errors /authorize shows or redirects
 * with. The code exchange, refresh, introspection and CORS are in token.test.ts, revocation in
 * revocation.test.ts, remembered consent in grants.test.ts, the metadata in metadata.test.ts and the audit
 * record in audit.test.ts.
 */

test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  PUBLIC_BASE_URL: 'https://platform.example.com',
})

/**
 * The users sign in to the sub-account (an agency's client: its parent is the owner account), except
 * multi@, a user of the owner account and of the stranger's.
 */
describe('authorization code flow: /authorize pages and /token', () => {
  test.beforeAll(async ({ t, owner, stranger, subAccount }) => {
    await createUser(t.app, 'solo@flow.example', [subAccount.accountId])
    // Users who have allowed nothing yet, for the tests that need the consent page.
    for (const email of ['es@flow.example', 'denier@flow.example'])
      await createUser(t.app, email, [subAccount.accountId])
    await createUser(t.app, 'multi@flow.example', [owner.accountId, stranger.accountId])
  })

  test('signs in, asks consent for the allowed scopes, and redirects with a code that /token exchanges', async ({
    t,
    oauthApp: client,
    owner,
    subAccount,
  }) => {
    const { authorizeQuery, exchange } = flowOf(t, client)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery())
    expect(signIn.status).toBe(200)
    expect(signIn.html).toContain('Reporting Hub')
    expect(signIn.headers['content-security-policy']).toContain("frame-ancestors 'none'")
    expect(signIn.headers).toMatchObject(DOCUMENT_SECURITY_HEADERS)
    expect(signIn.headers['set-cookie']).toMatch(
      /oauth_csrf=.+; Max-Age=900; Path=\/v1\/auth\/oauth; HttpOnly; Secure; SameSite=Strict/,
    )
    expect(signIn.headers['access-control-allow-origin']).toBeUndefined()

    const consent = await b.post('', { token: signIn.token, email: 'SOLO@flow.example', password: PASSWORD })
    expect(consent.status).toBe(200)
    // billing.read was asked for but the app may not have it: the intersection is shown.
    expect(consent.html).toContain('See your contacts')
    expect(consent.html).toContain('See your sites and funnels')
    expect(consent.html).not.toContain('billing')
    expect(consent.html).toContain('Sub-account')

    const decided = await b.post('/consent', { token: consent.token, decision: 'allow' })
    expect(decided.status).toBe(303)
    const location = redirected(decided.headers)
    expect(`${location.origin}${location.pathname}`).toBe(CALLBACK)
    expect(location.searchParams.get('state')).toBe('xyz-123')
    expect(location.searchParams.get('iss')).toBe('https://platform.example.com')

    const response = await exchange(location.searchParams.get('code') as string)
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('no-store')
    const body = response.json()
    expect(body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^[\w-]{43}$/),
      scope: 'crm.contacts.read sites.read',
    })
    const jwks = (await t.app.inject({ url: '/.well-known/jwks.json' })).json()
    const { payload, protectedHeader } = await jwtVerify(body.access_token, createLocalJWKSet(jwks), {
      issuer: 'https://platform.example.com',
      audience: 'https://platform.example.com',
    })
    expect(protectedHeader.alg).toBe('ES256')
    expect(payload).toMatchObject({
      type: 'access_token',
      account_id: subAccount.accountId,
      parent_account: owner.accountId,
      client_id: client._id,
      scope: 'crm.contacts.read sites.read',
      jti: expect.any(String),
    })
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600)
  })

  test('lets a user of several accounts choose one, and only one of theirs', async ({
    t,
    oauthApp: client,
    stranger,
    subAccount,
  }) => {
    const { authorizeQuery, authorize, exchange } = flowOf(t, client)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery())
    const choose = await b.post('', { token: signIn.token, email: 'multi@flow.example', password: PASSWORD })
    expect(choose.html).toContain('Owner')
    expect(choose.html).toContain('Stranger')
    const foreign = await b.post('/account', { token: choose.token, account_id: subAccount.accountId })
    expect(foreign.status).toBe(400)

    const { code } = await authorize('multi@flow.example', authorizeQuery(), stranger.accountId)
    const { access_token } = (await exchange(code)).json()
    const claims = JSON.parse(Buffer.from(access_token.split('.')[1], 'base64url').toString())
    expect(claims).toMatchObject({ account_id: stranger.accountId, parent_account: null })
  })

  test('shows the pages in Spanish for user_locale=es, scope descriptions too', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const b = browser(t.app)
    const page = await b.open(authorizeQuery({ user_locale: 'es-MX' }))
    expect(page.html).toContain('<html lang="es">')
    expect(page.html).toContain('Contraseña')
    const consent = await b.post('', { token: page.token, email: 'es@flow.example', password: PASSWORD })
    expect(consent.html).toContain('Ver tus contactos')
    expect(consent.html).toContain('Permitir')
  })

  test('refuses a wrong password on the sign-in page, and a page posted without its cookie or token', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery())
    const wrong = await b.post('', { token: signIn.token, email: 'solo@flow.example', password: 'nope' })
    expect(wrong.status).toBe(401)
    expect(wrong.html).toContain('The email or password is not right.')
    expect(wrong.html).toContain('value="solo@flow.example"')
    expect(
      (await b.post('', { token: 'forged', email: 'solo@flow.example', password: PASSWORD })).status,
    ).toBe(400)
    b.forgetCookie()
    const noCookie = await b.post('', { token: signIn.token, email: 'solo@flow.example', password: PASSWORD })
    expect(noCookie.status).toBe(400)
    expect(noCookie.html).toContain('This page has expired')
  })

  test('blocks an email after 10 wrong passwords, even with the right one, and no other email', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    // A new address each run: with Redis the count outlives the test.
    const email = `locked-${randomBytes(4).toString('hex')}@flow.example`
    await createUser(t.app, email, [subAccount.accountId])
    const b = browser(t.app)
    let page = await b.open(authorizeQuery())
    for (let i = 0; i < 10; i++) {
      page = await b.post('', { token: page.token, email, password: `guess-${i}` })
      expect(page.status).toBe(401)
    }
    const blocked = await b.post('', { token: page.token, email, password: PASSWORD })
    expect(blocked.status).toBe(429)
    expect(blocked.html).toContain('Too many attempts')
    const other = await b.post('', { token: page.token, email: 'solo@flow.example', password: PASSWORD })
    expect(other.status).not.toBe(429)
  })

  test('shows an error page, and never redirects, for an unknown client or an unregistered redirect URI', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    for (const query of [
      authorizeQuery({ client_id: '0123456789abcdef01234567' }),
      authorizeQuery({ client_id: 'not-an-id' }),
      authorizeQuery({ redirect_uri: 'https://evil.example.com/callback' }),
      authorizeQuery({ redirect_uri: `${CALLBACK}/` }),
    ]) {
      const page = await browser(t.app).open(query)
      expect(page.status).toBe(400)
      expect(page.headers.location).toBeUndefined()
    }
    expect((await browser(t.app).open(authorizeQuery({ client_id: 'x' }))).html).toContain(
      'Invalid Client ID',
    )
  })

  // A deliberate difference from the spec (docs/decisions.md): its Errors table says to redirect with
  // unauthorized_client, but an unknown client has no redirect URI this server can trust.
  test("shows an unknown client_id an HTML page saying 'Invalid Client ID' and redirects nowhere, not to the redirect_uri it gave (RFC 6749 4.1.2.1)", async ({
    t,
  }) => {
    for (const redirectUri of [CALLBACK, 'https://evil.example.com/callback']) {
      const page = await browser(t.app).open({
        response_type: 'code',
        client_id: '0123456789abcdef01234567',
        redirect_uri: redirectUri,
        state: 'xyz-123',
      })
      expect(page.status, redirectUri).toBe(400)
      expect(page.headers.location, redirectUri).toBeUndefined()
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
      expect(page.html).toContain('Invalid Client ID')
      expect(page.html).toContain('unauthorized_client')
      expect(page.html).not.toContain(redirectUri)
    }
  })

  test("redirects with the spec's errors, the state and the issuer", async ({ t, oauthApp: client }) => {
    const { authorizeQuery } = flowOf(t, client)
    const inactive = await registerApp(t.app, { active: false })
    const cases: [Record<string, string>, string, string?][] = [
      [{ client_id: inactive._id }, 'unauthorized_client', 'App is in dev mode'],
      [{ response_type: '' }, 'invalid_request'],
      [{ response_type: 'token' }, 'unsupported_response_type'],
      [{ code_challenge: 'a'.repeat(43), code_challenge_method: 'plain' }, 'invalid_request'],
      [{ code_challenge: 'a'.repeat(43) }, 'invalid_request'],
      [{ scope: 'billing.read' }, 'invalid_scope'],
    ]
    for (const [overrides, error, description] of cases) {
      const page = await browser(t.app).open(authorizeQuery(overrides))
      expect(page.status, error).toBe(302)
      const location = redirected(page.headers)
      expect(location.searchParams.get('error')).toBe(error)
      expect(location.searchParams.get('state')).toBe('xyz-123')
      expect(location.searchParams.get('iss')).toBe('https://platform.example.com')
      if (description) expect(location.searchParams.get('error_description')).toBe(description)
    }
  })

  test('redirects with access_denied when the user denies', async ({ t, oauthApp: client }) => {
    const { authorizeQuery } = flowOf(t, client)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery())
    const consent = await b.post('', {
      token: signIn.token,
      email: 'denier@flow.example',
      password: PASSWORD,
    })
    const denied = await b.post('/consent', { token: consent.token, decision: 'deny' })
    expect(denied.status).toBe(303)
    expect(Object.fromEntries(redirected(denied.headers).searchParams)).toMatchObject({
      error: 'access_denied',
      state: 'xyz-123',
    })
  })
})
