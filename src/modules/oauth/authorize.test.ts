import { randomBytes } from 'node:crypto'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { createAccount } from '../../../test/helpers/fixtures.js'
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
import { buildApp } from '../../app.js'
import { s256 } from './pkce.js'

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

  test('blocks an email after 10 wrong passwords from one source (an IP, an IPv6 /64), from there only, saying how long', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    // A new address and networks each run: with Redis the count outlives the test.
    const email = `locked-${randomBytes(4).toString('hex')}@flow.example`
    const network = () => `2001:db8:${randomBytes(2).toString('hex')}:${randomBytes(2).toString('hex')}`
    const [attackers, users] = [network(), network()]
    await createUser(t.app, email, [subAccount.accountId])
    const attacker = browser(t.app, { remoteAddress: `${attackers}::1` })
    let page = await attacker.open(authorizeQuery())
    for (let i = 0; i < 10; i++) {
      page = await attacker.post('', { token: page.token, email, password: `guess-${i}` })
      expect(page.status).toBe(401)
    }
    const blocked = await attacker.post('', { token: page.token, email, password: PASSWORD })
    expect(blocked.status).toBe(429)
    // The real wait, not "a minute": what is left of the 15 minutes, in the page and in Retry-After.
    const retryAfter = Number(blocked.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(15 * 60)
    expect(blocked.html).toContain(`Too many attempts. Try again in ${Math.ceil(retryAfter / 60)} minutes.`)
    const other = await attacker.post('', {
      token: page.token,
      email: 'solo@flow.example',
      password: PASSWORD,
    })
    expect(other.status).not.toBe(429)
    // Another address of the same /64 is the same source.
    const neighbour = browser(t.app, { remoteAddress: `${attackers}::2:1` })
    const next = await neighbour.open(authorizeQuery())
    expect((await neighbour.post('', { token: next.token, email, password: PASSWORD })).status).toBe(429)

    // The user, from their own network, still signs in: the flood locked the attacker's source only.
    const user = browser(t.app, { remoteAddress: `${users}::1` })
    const signIn = await user.open(authorizeQuery())
    const consent = await user.post('', { token: signIn.token, email, password: PASSWORD })
    expect(consent.status).toBe(200)
    expect(consent.html).toContain('Allow access')
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

  test('refuses a parameter given twice (RFC 6749 3.1): a page while the client or redirect URI is unsure, else a redirect with invalid_request', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const challenge = s256(randomBytes(32).toString('base64url'))
    /** The usual request, PKCE included, with `name` given twice. */
    const twice = (name: string, [first, second]: [string, string]) => {
      const query = new URLSearchParams(
        authorizeQuery({ code_challenge: challenge, code_challenge_method: 'S256' }),
      )
      query.delete(name)
      query.append(name, first)
      query.append(name, second)
      return query
    }
    for (const name of ['client_id', 'redirect_uri'] as const) {
      const value = name === 'client_id' ? client._id : CALLBACK
      const page = await browser(t.app).open(twice(name, [value, value]))
      expect(page.status, name).toBe(400)
      expect(page.headers.location, name).toBeUndefined()
      expect(page.html).toContain(`${name} must not be repeated`)
    }
    const cases: [string, [string, string], string | null][] = [
      // Once, PKCE was dropped and the code was redeemed without a verifier.
      ['code_challenge', [challenge, s256(randomBytes(32).toString('base64url'))], 'xyz-123'],
      ['scope', ['crm.contacts.read', 'sites.read'], 'xyz-123'],
      ['response_type', ['code', 'code'], 'xyz-123'],
      // A state given twice is none: it is not sent back.
      ['state', ['one', 'two'], null],
    ]
    for (const [name, values, state] of cases) {
      const page = await browser(t.app).open(twice(name, values))
      expect(page.status, name).toBe(302)
      const location = redirected(page.headers)
      expect(`${location.origin}${location.pathname}`).toBe(CALLBACK)
      expect(Object.fromEntries(location.searchParams), name).toEqual({
        error: 'invalid_request',
        error_description: `${name} must not be repeated`,
        iss: 'https://platform.example.com',
        ...(state && { state }),
      })
    }
  })

  test('refuses a field posted twice on the sign-in, account and consent pages: to the app with invalid_request, or a page for the token twice', async ({
    t,
    oauthApp: client,
    owner,
    stranger,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const email = `twice-${randomBytes(4).toString('hex')}@flow.example`
    await createUser(t.app, email, [owner.accountId, stranger.accountId])
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery())
    const withTwice = (fields: Record<string, string>, name: string, second: string) => {
      const form = new URLSearchParams(fields)
      form.append(name, second)
      return form
    }
    const expectRefusedToApp = (page: { status: number; headers: Record<string, unknown> }, name: string) => {
      expect(page.status, name).toBe(303)
      expect(Object.fromEntries(redirected(page.headers).searchParams), name).toMatchObject({
        error: 'invalid_request',
        error_description: `${name} must not be repeated`,
        state: 'xyz-123',
      })
      expect(redirected(page.headers).searchParams.has('code')).toBe(false)
    }
    const credentials = { token: signIn.token, email, password: PASSWORD }
    expectRefusedToApp(await b.post('', withTwice(credentials, 'email', 'solo@flow.example')), 'email')
    const tokenTwice = await b.post('', withTwice(credentials, 'token', signIn.token))
    expect(tokenTwice.status).toBe(400)
    expect(tokenTwice.headers.location).toBeUndefined()
    expect(tokenTwice.html).toContain('token must not be repeated')

    const choose = await b.post('', credentials)
    const chosen = { token: choose.token, account_id: owner.accountId }
    expectRefusedToApp(
      await b.post('/account', withTwice(chosen, 'account_id', stranger.accountId)),
      'account_id',
    )
    const consent = await b.post('/account', chosen)
    expect(consent.status).toBe(200)
    const decision = { token: consent.token, decision: 'allow' }
    expectRefusedToApp(await b.post('/consent', withTwice(decision, 'decision', 'allow')), 'decision')
  })

  test('with OAUTH_REQUIRE_PKCE=true requires a code_challenge of every app, confidential ones too (RFC 9700 2.1.1); not by default', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery, authorize, exchange } = flowOf(t, client)
    // By default a confidential app may leave PKCE out.
    expect((await browser(t.app).open(authorizeQuery())).status).toBe(200)

    const strict = await buildApp(
      { ...t.config, oauth: { ...t.config.oauth, requirePkce: true } },
      { database: t.database.handle },
    )
    try {
      const page = await browser(strict).open(authorizeQuery())
      expect(page.status).toBe(302)
      expect(Object.fromEntries(redirected(page.headers).searchParams)).toMatchObject({
        error: 'invalid_request',
        error_description: 'code_challenge is required',
        state: 'xyz-123',
      })
      const verifier = randomBytes(32).toString('base64url')
      const withPkce = authorizeQuery({ code_challenge: s256(verifier), code_challenge_method: 'S256' })
      expect((await browser(strict).open(withPkce)).status).toBe(200)
      const { code } = await authorize('solo@flow.example', withPkce)
      expect((await exchange(code, { code_verifier: verifier })).statusCode).toBe(200)
    } finally {
      await strict.close()
    }
  })

  test('refuses a suspended account: no consent page, no code (a remembered consent neither), a page that says so; reactivated, it works again', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorizeQuery, authorize } = flowOf(t, client)
    const [shop, other] = [
      await createAccount(t.app, { name: 'Shop' }),
      await createAccount(t.app, { name: 'Other' }),
    ]
    const email = `suspended-${randomBytes(4).toString('hex')}@flow.example`
    await createUser(t.app, email, [shop])
    const setStatus = async (accountId: string, status: 'active' | 'suspended') => {
      const response = await t.app.inject({
        method: 'PATCH',
        url: `/v1/admin/accounts/${accountId}`,
        headers: adminHeaders,
        payload: { status },
      })
      expect(response.statusCode).toBe(200)
    }
    const expectSuspendedPage = (page: {
      status: number
      html: string
      headers: Record<string, unknown>
    }) => {
      expect(page.status).toBe(403)
      expect(page.headers.location).toBeUndefined()
      expect(page.html).toContain('This account is suspended: no app can be allowed access to it.')
    }
    const signIn = async (as = email) => {
      const b = browser(t.app)
      const page = await b.open(authorizeQuery())
      return { b, page: await b.post('', { token: page.token, email: as, password: PASSWORD }) }
    }

    await setStatus(shop, 'suspended')
    expectSuspendedPage((await signIn()).page)

    // Suspended while the consent page was open: allowing it issues no code.
    await setStatus(shop, 'active')
    const open = await signIn()
    expect(open.page.html).toContain('Allow access')
    await setStatus(shop, 'suspended')
    expectSuspendedPage(await open.b.post('/consent', { token: open.page.token, decision: 'allow' }))

    // Allowed while active; suspended, the remembered consent issues no code either.
    await setStatus(shop, 'active')
    expect((await authorize(email)).code).toBeTruthy()
    await setStatus(shop, 'suspended')
    expectSuspendedPage((await signIn()).page)
    await setStatus(shop, 'active')
    const again = await authorize(email)
    expect(again.status).toBe(303)
    expect(again.code).toBeTruthy()

    // A user of two accounts is offered the active one only, and cannot post the suspended one.
    const multi = `suspended-multi-${randomBytes(4).toString('hex')}@flow.example`
    await createUser(t.app, multi, [shop, other])
    const choice = await signIn(multi)
    expect(choice.page.html).toContain('Choose an account')
    await setStatus(other, 'suspended')
    expectSuspendedPage(await choice.b.post('/account', { token: choice.page.token, account_id: other }))
    const straight = (await signIn(multi)).page
    expect(straight.html).toContain('Allow access')
    expect(straight.html).toContain('in the account Shop')
    await setStatus(shop, 'suspended')
    expectSuspendedPage((await signIn(multi)).page)
  })
})
