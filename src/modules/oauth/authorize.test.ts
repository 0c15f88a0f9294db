import { createHash, randomBytes } from 'node:crypto'
import { createLocalJWKSet, jwtVerify } from 'jose'
import { describe, expect } from 'vitest'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import {
  allowIfAsked,
  browser,
  createUser,
  PASSWORD,
  postAsClient,
  type RegisteredApp,
  redirected,
  registerApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { DOCUMENT_SECURITY_HEADERS } from '../../../test/helpers/security-headers.js'
import { test } from '../../../test/helpers/tenant-test.js'

const CALLBACK = 'https://hub.example.com/callback'

test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  PUBLIC_BASE_URL: 'https://platform.example.com',
})

/** The test's calls to the pages and /token, as `client`. */
function flowOf(t: TestApp, client: RegisteredApp) {
  const authorizeQuery = (overrides: Record<string, string> = {}) => ({
    response_type: 'code',
    client_id: client._id,
    redirect_uri: CALLBACK,
    scope: 'crm.contacts.read sites.read billing.read',
    state: 'xyz-123',
    ...overrides,
  })

  /** Signs in as `email` through the pages and allows; the code and the redirect it came in. */
  async function authorize(
    email: string,
    query: Record<string, string> = authorizeQuery(),
    accountId?: string,
  ) {
    const b = browser(t.app)
    const signIn = await b.open(query)
    let page = await b.post('', { token: signIn.token, email, password: PASSWORD })
    if (accountId) page = await b.post('/account', { token: page.token, account_id: accountId })
    const decided = await allowIfAsked(b, page)
    const location = redirected(decided.headers)
    return { code: location.searchParams.get('code') as string, location, status: decided.status }
  }

  const exchange = (code: string, extra: Record<string, string> = {}) =>
    tokenRequest(t.app, { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...extra }, [
      client._id,
      client.client_secret,
    ])
  return { authorizeQuery, authorize, exchange }
}

/**
 * The users sign in to the sub-account (an agency's client: its parent is the owner account), except
 * multi@, a user of the owner account and of the stranger's.
 */
describe('authorization code flow: /authorize pages and /token', () => {
  let freshId: string

  test.beforeAll(async ({ t, owner, stranger, subAccount }) => {
    await createUser(t.app, 'solo@flow.example', [subAccount.accountId])
    // Users who have allowed nothing yet, for the tests that need the consent page.
    for (const email of ['es@flow.example', 'denier@flow.example'])
      await createUser(t.app, email, [subAccount.accountId])
    freshId = (await createUser(t.app, 'fresh@flow.example', [subAccount.accountId]))._id
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

  test('uses a code once: a replay is invalid_grant and revokes the tokens the code gave', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const { code } = await authorize('solo@flow.example')
    const first = (await exchange(code)).json()
    const replay = await exchange(code)
    expect(replay.statusCode).toBe(400)
    expect(replay.json()).toMatchObject({ error: 'invalid_grant' })
    const refresh = await tokenRequest(
      t.app,
      { grant_type: 'refresh_token', refresh_token: first.refresh_token },
      [client._id, client.client_secret],
    )
    expect(refresh.json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('refuses a code for another redirect URI, after 10 minutes, or of another client', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const mismatch = await authorize('solo@flow.example')
    expect(
      (await exchange(mismatch.code, { redirect_uri: 'https://hub.example.com/other' })).json(),
    ).toMatchObject({
      error: 'invalid_grant',
      error_description: 'redirect_uri does not match the authorization request',
    })
    const other = await registerApp(t.app, { redirect_uris: [CALLBACK] })
    const stolen = await authorize('solo@flow.example')
    const asOther = await tokenRequest(
      t.app,
      { grant_type: 'authorization_code', code: stolen.code, redirect_uri: CALLBACK },
      [other._id, other.client_secret],
    )
    expect(asOther.json()).toMatchObject({ error: 'invalid_grant' })
    const late = await authorize('solo@flow.example')
    await t.app.platform.db.execute(
      `update oauth_codes set expires_at = now() - interval '1 second' where used_at is null` as never,
    )
    expect((await exchange(late.code)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('authenticates clients by Basic or body fields, answering invalid_client with WWW-Authenticate', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize } = flowOf(t, client)
    const { code } = await authorize('solo@flow.example')
    const wrong = await tokenRequest(
      t.app,
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK },
      [client._id, 'not-the-secret'],
    )
    expect(wrong.statusCode).toBe(401)
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic realm="oauth"/)
    expect(wrong.json()).toMatchObject({ error: 'invalid_client' })
    const inBody = await tokenRequest(t.app, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: client._id,
      client_secret: client.client_secret,
    })
    expect(inBody.statusCode).toBe(200)
    const noSecret = await tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: client._id,
    })
    expect(noSecret.json()).toMatchObject({ error: 'invalid_client' })
    const grant = await tokenRequest(t.app, { grant_type: 'password' }, [client._id, client.client_secret])
    expect(grant.json()).toMatchObject({ error: 'unsupported_grant_type' })
    expect((await tokenRequest(t.app, {}, [client._id, client.client_secret])).json()).toMatchObject({
      error: 'invalid_request',
    })
  })

  test('requires S256 PKCE of a public app and checks the verifier', async ({ t, oauthApp: client }) => {
    const { authorize } = flowOf(t, client)
    const spa = await registerApp(t.app, { public: true, redirect_uris: ['http://127.0.0.1:5173/cb'] })
    const verifier = randomBytes(32).toString('base64url')
    const challenge = createHash('sha256').update(verifier).digest('base64url')
    const query = {
      response_type: 'code',
      client_id: spa._id,
      redirect_uri: 'http://127.0.0.1:5173/cb',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }
    const withoutPkce = await browser(t.app).open({ ...query, code_challenge: '', code_challenge_method: '' })
    expect(redirected(withoutPkce.headers).searchParams.get('error')).toBe('invalid_request')

    const exchangeAs = (code: string, codeVerifier: string) =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: 'http://127.0.0.1:5173/cb',
        client_id: spa._id,
        code_verifier: codeVerifier,
      })
    const wrong = await authorize('solo@flow.example', query)
    expect((await exchangeAs(wrong.code, randomBytes(32).toString('base64url'))).json()).toMatchObject({
      error: 'invalid_grant',
    })
    const right = await authorize('solo@flow.example', query)
    const tokens = await exchangeAs(right.code, verifier)
    expect(tokens.statusCode).toBe(200)
    expect(tokens.json().scope).toBe('crm.contacts.read analytics.read sites.read')
  })

  test('rotates refresh tokens, allows the previous one within the grace period, and revokes the grant after it', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const { code } = await authorize('solo@flow.example')
    const first = (await exchange(code)).json()
    const refresh = (token: string) =>
      tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token }, [
        client._id,
        client.client_secret,
      ])
    const second = await refresh(first.refresh_token)
    expect(second.statusCode).toBe(200)
    expect(second.json()).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'crm.contacts.read sites.read',
    })
    expect(second.json().refresh_token).not.toBe(first.refresh_token)

    // A client that lost that answer retries with the first token: allowed, and the lost one is revoked.
    const retried = await refresh(first.refresh_token)
    expect(retried.statusCode).toBe(200)
    expect((await refresh(second.json().refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })

    // Past the grace period the first token is taken as stolen: the whole grant goes.
    await t.app.platform.db.execute(
      `update oauth_refresh_tokens set replaced_at = now() - interval '2 minutes' where replaced_at is not null` as never,
    )
    expect((await refresh(first.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    expect((await refresh(retried.json().refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('revokes a refresh token with its grant (RFC 7009), answering 200 for unknown and foreign tokens', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const revoke = (token: string, as: RegisteredApp = client) => postAsClient(t.app, 'revoke', { token }, as)
    const refresh = (token: string) =>
      tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token }, [
        client._id,
        client.client_secret,
      ])
    const tokens = (await exchange((await authorize('solo@flow.example')).code)).json()

    const other = await registerApp(t.app)
    expect((await revoke(tokens.refresh_token, other)).statusCode).toBe(200)
    const stillGood = await refresh(tokens.refresh_token)
    expect(stillGood.statusCode).toBe(200)

    expect((await revoke(stillGood.json().refresh_token)).statusCode).toBe(200)
    expect((await refresh(stillGood.json().refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    // The grace period of the first token ends with the revocation too.
    expect((await refresh(tokens.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })

    expect((await revoke('never-issued')).statusCode).toBe(200)
    expect((await revoke(tokens.access_token)).json()).toMatchObject({ error: 'unsupported_token_type' })
    expect((await revoke('')).json()).toMatchObject({ error: 'invalid_request' })
  })

  test("introspects the calling client's tokens (RFC 7662), and nobody else's", async ({
    t,
    oauthApp: client,
    owner,
    subAccount,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const introspect = (token: string, as: RegisteredApp = client) =>
      postAsClient(t.app, 'introspect', { token }, as)
    const tokens = (await exchange((await authorize('solo@flow.example')).code)).json()
    const access = await introspect(tokens.access_token)
    expect(access.headers['cache-control']).toBe('no-store')
    expect(access.json()).toMatchObject({
      active: true,
      token_type: 'Bearer',
      scope: 'crm.contacts.read sites.read',
      client_id: client._id,
      account_id: subAccount.accountId,
      parent_account: owner.accountId,
      iss: 'https://platform.example.com',
      exp: expect.any(Number),
      jti: expect.any(String),
    })
    expect((await introspect(tokens.refresh_token)).json()).toMatchObject({
      active: true,
      token_type: 'refresh_token',
      scope: 'crm.contacts.read sites.read',
      account_id: subAccount.accountId,
    })
    const other = await registerApp(t.app)
    expect((await introspect(tokens.access_token, other)).json()).toEqual({ active: false })
    expect((await introspect(tokens.refresh_token, other)).json()).toEqual({ active: false })
    expect((await introspect('garbage')).json()).toEqual({ active: false })
    await postAsClient(t.app, 'revoke', { token: tokens.refresh_token }, client)
    expect((await introspect(tokens.refresh_token)).json()).toEqual({ active: false })
  })

  test('describes itself at /.well-known/oauth-authorization-server (RFC 8414)', async ({ t }) => {
    const response = await t.app.inject({ url: '/.well-known/oauth-authorization-server' })
    expect(response.json()).toMatchObject({
      issuer: 'https://platform.example.com',
      authorization_endpoint: 'https://platform.example.com/v1/auth/oauth/authorize',
      token_endpoint: 'https://platform.example.com/v1/auth/oauth/token',
      revocation_endpoint: 'https://platform.example.com/v1/auth/oauth/revoke',
      jwks_uri: 'https://platform.example.com/.well-known/jwks.json',
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    })
    expect(response.json().scopes_supported).toHaveLength(13)
  })

  test('remembers consent per app, user and account, asks again for new scopes, and forgets a revoked grant', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery, exchange } = flowOf(t, client)
    const signIn = async (scope: string) => {
      const b = browser(t.app)
      const page = await b.open(authorizeQuery({ scope }))
      return {
        b,
        page: await b.post('', { token: page.token, email: 'fresh@flow.example', password: PASSWORD }),
      }
    }
    const first = await signIn('crm.contacts.read')
    expect(first.page.status).toBe(200)
    const code = redirected(
      (await first.b.post('/consent', { token: first.page.token, decision: 'allow' })).headers,
    ).searchParams.get('code') as string
    const again = await signIn('crm.contacts.read')
    expect(again.page.status).toBe(303)
    expect(redirected(again.page.headers).searchParams.get('code')).toBeTruthy()
    expect((await signIn('crm.contacts.read analytics.read')).page.status).toBe(200)

    const token = (
      await t.app.inject({
        method: 'POST',
        url: '/v1/admin/tokens',
        headers: adminHeaders,
        payload: { user_id: freshId, account_id: subAccount.accountId },
      })
    ).json().data.token as string
    const grants = () => t.app.inject({ url: '/v1/auth/oauth/grants', headers: bearer(token) })
    expect((await grants()).json().data).toEqual([
      {
        client_id: client._id,
        app_name: 'Reporting Hub',
        scopes: ['crm.contacts.read'],
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    ])
    const tokens = (await exchange(code)).json()
    const revoke = () =>
      t.app.inject({ method: 'DELETE', url: `/v1/auth/oauth/grants/${client._id}`, headers: bearer(token) })
    expect((await revoke()).json()).toEqual({ success: true, message: 'SUCCESS', data: { revoked: true } })
    expect((await grants()).json().data).toEqual([])
    const refreshed = await tokenRequest(
      t.app,
      { grant_type: 'refresh_token', refresh_token: tokens.refresh_token },
      [client._id, client.client_secret],
    )
    expect(refreshed.json()).toMatchObject({ error: 'invalid_grant' })
    expect((await signIn('crm.contacts.read')).page.status).toBe(200)
    expect((await revoke()).statusCode).toBe(404)
  })

  test('keeps an audit record of consents, token issues, refreshes, revocations and failed client logins', async ({
    t,
    oauthApp: client,
    subAccount,
  }) => {
    const { authorizeQuery } = flowOf(t, client)
    const audited = await registerApp(t.app)
    const b = browser(t.app)
    const signIn = await b.open(authorizeQuery({ client_id: audited._id }))
    const consent = await b.post('', { token: signIn.token, email: 'solo@flow.example', password: PASSWORD })
    const decided = await b.post('/consent', { token: consent.token, decision: 'allow' })
    const code = redirected(decided.headers).searchParams.get('code') as string
    const as = (fields: Record<string, string>, secret = audited.client_secret) =>
      tokenRequest(t.app, fields, [audited._id, secret])
    const tokens = (await as({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK })).json()
    await as({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token })
    await as({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK }) // a replay
    await as({ grant_type: 'refresh_token', refresh_token: 'x' }, 'wrong secret')

    const audit = await t.app.inject({
      url: `/v1/admin/oauth/audit?client_id=${audited._id}`,
      headers: adminHeaders,
    })
    const events = audit.json().data as {
      event: string
      account_id: string | null
      detail: object
      ip: string
    }[]
    expect(events.map((e) => e.event)).toEqual([
      'client.authentication_failed',
      'grant.revoked',
      'token.refreshed',
      'token.issued',
      'consent.granted',
    ])
    expect(events[1]).toMatchObject({ account_id: subAccount.accountId, detail: { reason: 'code_replay' } })
    expect(events[4]).toMatchObject({
      ip: '127.0.0.1',
      detail: { scopes: ['crm.contacts.read', 'sites.read'] },
    })
    expect(JSON.stringify(events)).not.toContain(tokens.refresh_token)
  })

  test('answers CORS preflights on /token only', async ({ t }) => {
    const preflight = await t.app.inject({
      method: 'OPTIONS',
      url: '/v1/auth/oauth/token',
      headers: { origin: 'https://spa.example.com', 'access-control-request-method': 'POST' },
    })
    expect(preflight.statusCode).toBe(204)
    expect(preflight.headers['access-control-allow-origin']).toBe('*')
    const answer = await t.app.inject({
      method: 'POST',
      url: '/v1/auth/oauth/token',
      headers: { origin: 'https://spa.example.com', 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'grant_type=refresh_token',
    })
    expect(answer.headers['access-control-allow-origin']).toBe('*')
    for (const url of ['/v1/auth/oauth/revoke', '/v1/auth/oauth/introspect']) {
      const other = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: { origin: 'https://spa.example.com', 'access-control-request-method': 'POST' },
      })
      expect(other.headers['access-control-allow-origin'], url).toBeUndefined()
    }
    const page = await t.app.inject({
      url: '/v1/auth/oauth/authorize',
      headers: { origin: 'https://spa.example.com' },
    })
    expect(page.headers['access-control-allow-origin']).toBeUndefined()
  })
})
