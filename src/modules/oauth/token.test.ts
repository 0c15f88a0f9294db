import { createHash, randomBytes } from 'node:crypto'
import { and, count, eq, sql } from 'drizzle-orm'
import { describe, expect, vi } from 'vitest'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import {
  allowIfAsked,
  browser,
  CALLBACK,
  createUser,
  flowOf,
  PASSWORD,
  postAsClient,
  type RegisteredApp,
  redirected,
  registerApp,
  TOKEN,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { APP_CACHE_MS } from './app-cache.js'
import { CLIENT_AUTH_FAILURES } from './client-auth.service.js'
import { keptHash } from './kept-hash.js'
import { oauthAuditEvents } from './tables.js'

/**
 * The token endpoint (with introspection and CORS, which its routes serve too): first cases ported from
 * the test suites of reference authorization servers (PKCE downgrades, two client authentication methods at
 * once, unknown clients and codes, missing parameters, refresh tokens of other clients or past their 90
 * days, a code raced twice), then the code and refresh grants and client authentication as an app uses them.
 */

const EMAIL = 'tokens@cases.example'

const pkcePair = () => {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  PUBLIC_BASE_URL: 'https://platform.example.com',
})

/** The test's calls to /authorize and /token, as `client` unless another OAuth app is given. */
function tokenCalls(t: TestApp, client: RegisteredApp) {
  /** A code for `as`, through the pages (consent allowed, or remembered), with the extra query given. */
  async function codeFor(as: RegisteredApp = client, extra: Record<string, string> = {}) {
    const b = browser(t.app)
    const signIn = await b.open({
      response_type: 'code',
      client_id: as._id,
      redirect_uri: CALLBACK,
      state: 'case',
      ...extra,
    })
    const decided = await allowIfAsked(
      b,
      await b.post('', { token: signIn.token, email: EMAIL, password: PASSWORD }),
    )
    const code = redirected(decided.headers).searchParams.get('code')
    if (!code) throw new Error(`no code in ${decided.headers.location}`)
    return code
  }

  const basic = (as: RegisteredApp = client): [string, string] => [as._id, as.client_secret]
  const exchange = (code: string, extra: Record<string, string> = {}, as: RegisteredApp = client) =>
    tokenRequest(
      t.app,
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, ...extra },
      basic(as),
    )
  const refresh = (token: string, as: RegisteredApp = client) =>
    tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token }, basic(as))
  return { codeFor, basic, exchange, refresh }
}

describe('token endpoint edge cases', () => {
  test.beforeAll(async ({ t, owner }) => {
    await createUser(t.app, EMAIL, [owner.accountId])
  })

  test('refuses a code issued with a PKCE challenge when /token gets no code_verifier, and the code is then spent', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const { verifier, challenge } = pkcePair()
    const code = await codeFor(client, { code_challenge: challenge, code_challenge_method: 'S256' })
    const downgraded = await exchange(code)
    expect(downgraded.statusCode).toBe(400)
    expect(downgraded.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge',
    })
    // A failed attempt uses the code up: the verifier cannot be guessed over several tries.
    expect((await exchange(code, { code_verifier: verifier })).json()).toMatchObject({
      error: 'invalid_grant',
    })
  })

  test('refuses a code_verifier for a code issued without a PKCE challenge', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const code = await codeFor()
    const response = await exchange(code, { code_verifier: pkcePair().verifier })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'code_verifier does not match the code_challenge',
    })
  })

  test('gives tokens for a confidential client’s PKCE code with the matching verifier', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const { verifier, challenge } = pkcePair()
    const code = await codeFor(client, { code_challenge: challenge, code_challenge_method: 'S256' })
    const response = await exchange(code, { code_verifier: verifier })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3600 })
  })

  test('answers invalid_request to Basic credentials together with a client_secret in the body (RFC 6749 2.3: one method only)', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const code = await codeFor()
    const fields = {
      grant_type: 'authorization_code',
      code,
      redirect_uri: CALLBACK,
      client_id: client._id,
      client_secret: client.client_secret,
    }
    for (const secret of [client.client_secret, 'not-the-secret']) {
      const both = await tokenRequest(t.app, fields, [client._id, secret])
      expect(both.statusCode, secret).toBe(400)
      expect(both.headers['cache-control']).toBe('no-store')
      expect(both.json()).toEqual({
        error: 'invalid_request',
        error_description: 'Use one client authentication method, not two',
      })
    }
    // Refused before the code was looked at: it still works with one method.
    expect((await exchange(code)).statusCode).toBe(200)
  })

  test('accepts Basic credentials with the same client_id repeated in the body, which is not a second method', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const code = await codeFor()
    expect((await exchange(code, { client_id: client._id })).statusCode).toBe(200)
  })

  test('answers invalid_request to Basic credentials with another client_id in the body', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const other = await registerApp(t.app)
    const code = await codeFor()
    const response = await exchange(code, { client_id: other._id })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'client_id in the body is not the client of the Basic credentials',
    })
  })

  test('answers unauthorized_client to an app put back into development mode, for codes and refresh tokens', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const app = await registerApp(t.app)
    const setActive = (active: boolean) =>
      t.app.inject({
        method: 'PATCH',
        url: `/v1/admin/oauth/apps/${app._id}`,
        headers: adminHeaders,
        payload: { active },
      })
    const first = await exchange(await codeFor(app), {}, app)
    const code = await codeFor(app)
    await setActive(false)
    const refused = { error: 'unauthorized_client', error_description: 'App is in dev mode' }
    expect((await exchange(code, {}, app)).json()).toEqual(refused)
    expect((await refresh(first.json().refresh_token, app)).json()).toEqual(refused)
    await setActive(true)
    expect((await refresh(first.json().refresh_token, app)).statusCode).toBe(200)
  })

  test('stops taking the old client secret as soon as it is rotated here', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const app = await registerApp(t.app)
    const { refresh_token } = (await exchange(await codeFor(app), {}, app)).json()
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/oauth/apps/${app._id}/secret`,
      headers: adminHeaders,
    })
    const renewed = { ...app, client_secret: rotated.json().data.client_secret as string }
    expect((await refresh(refresh_token, app)).json()).toMatchObject({ error: 'invalid_client' })
    expect((await refresh(refresh_token, renewed)).statusCode).toBe(200)
  })

  test('sees an app changed by another instance within APP_CACHE_MS (5 s)', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const app = await registerApp(t.app)
    const code = await codeFor(app)
    // The clock stands still from the read of the row on: its age is what the test sets, not however long
    // the requests take on a busy machine.
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      const { refresh_token } = (await exchange(code, {}, app)).json()
      // Another instance deactivates the app: this one still has the row it read for the exchange.
      await t.database.handle.db.execute(sql`update oauth_apps set active = false where id = ${app._id}`)
      vi.setSystemTime(Date.now() + APP_CACHE_MS)
      const next = await refresh(refresh_token, app)
      expect(next.statusCode).toBe(200)
      vi.setSystemTime(Date.now() + 1)
      expect((await refresh(next.json().refresh_token, app)).json()).toMatchObject({
        error: 'unauthorized_client',
      })
    } finally {
      vi.useRealTimers()
    }
  })

  test('answers 429 with Retry-After to an address past 30 failed client authentications, unrecorded, and still serves good credentials from it', async ({
    t,
    oauthApp: client,
  }) => {
    const fromAddress = (ip: string, secret: string) =>
      t.app.inject({
        method: 'POST',
        url: TOKEN,
        remoteAddress: ip,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({
          grant_type: 'refresh_token',
          refresh_token: 'unknown',
          client_id: client._id,
          client_secret: secret,
        }).toString(),
      })
    const countOf = async () => {
      const [row] = await t.database.handle.db
        .select({ n: count() })
        .from(oauthAuditEvents)
        .where(
          and(
            eq(oauthAuditEvents.event, 'client.authentication_failed'),
            eq(oauthAuditEvents.clientId, client._id),
          ),
        )
      return row?.n ?? 0
    }
    // Fresh addresses each run: with Redis the counts outlive the test.
    const [noisy, quiet] = [`203.0.113.${randomBytes(1)[0]}`, `198.51.100.${randomBytes(1)[0]}`]
    const before = await countOf()
    for (let i = 0; i < CLIENT_AUTH_FAILURES; i++)
      expect((await fromAddress(noisy, 'wrong')).statusCode).toBe(401)
    const limited = await fromAddress(noisy, 'wrong')
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ error: 'too_many_requests' })
    // The wait until the failures lapse, within their 15 minutes.
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(15 * 60)
    expect(await countOf()).toBe(before + CLIENT_AUTH_FAILURES)
    // The right secret from the same address is not refused; other addresses are not affected.
    expect((await fromAddress(noisy, client.client_secret)).json()).toMatchObject({ error: 'invalid_grant' })
    expect((await fromAddress(quiet, 'wrong')).statusCode).toBe(401)
  })

  test('answers invalid_request to a repeated parameter (RFC 6749 3.2), before the code is spent', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    const code = await codeFor()
    const response = await t.app.inject({
      method: 'POST',
      url: TOKEN,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: `grant_type=authorization_code&grant_type=authorization_code&code=${code}&redirect_uri=${encodeURIComponent(CALLBACK)}&client_id=${client._id}&client_secret=${client.client_secret}`,
    })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toEqual({
      error: 'invalid_request',
      error_description: 'grant_type must not be repeated',
    })
    expect((await exchange(code)).statusCode).toBe(200)
  })

  test('answers invalid_request to a code_verifier that is not 43 to 128 unreserved characters (RFC 7636 4.1)', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange } = tokenCalls(t, client)
    for (const verifier of ['abc', 'a'.repeat(129), `${'a'.repeat(42)}!`]) {
      const challenge = createHash('sha256').update(verifier).digest('base64url')
      const code = await codeFor(client, { code_challenge: challenge, code_challenge_method: 'S256' })
      const response = await exchange(code, { code_verifier: verifier })
      expect(response.json(), verifier).toEqual({
        error: 'invalid_request',
        error_description: 'code_verifier must be 43 to 128 unreserved characters',
      })
    }
  })

  test('answers invalid_client with 401 for an unknown client, a malformed client id and a malformed Basic header', async ({
    t,
    oauthApp: client,
  }) => {
    const unknown = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x' }, [
      '0123456789abcdef01234567',
      'some-secret',
    ])
    const malformedId = await tokenRequest(t.app, {
      grant_type: 'refresh_token',
      refresh_token: 'x',
      client_id: 'not-an-id',
      client_secret: 'some-secret',
    })
    const malformedHeader = await t.app.inject({
      method: 'POST',
      url: TOKEN,
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(client._id).toString('base64')}`,
      },
      payload: 'grant_type=refresh_token&refresh_token=x',
    })
    const noCredentials = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x' })
    for (const [name, response] of Object.entries({ unknown, malformedId, malformedHeader, noCredentials })) {
      expect(response.statusCode, name).toBe(401)
      expect(response.headers['www-authenticate'], name).toMatch(/^Basic realm="oauth"/)
      expect(response.json(), name).toEqual({
        error: 'invalid_client',
        error_description: 'Client authentication failed',
      })
    }
  })

  test('answers invalid_grant, with no-store, to a code that was never issued', async ({
    t,
    oauthApp: client,
  }) => {
    const { exchange } = tokenCalls(t, client)
    const response = await exchange(randomBytes(32).toString('base64url'))
    expect(response.statusCode).toBe(400)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    expect(response.headers['cache-control']).toBe('no-store')
    expect(response.json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The code is unknown, expired or already used',
    })
  })

  test('answers invalid_request when the code, the redirect_uri or the refresh token is missing', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, basic, exchange } = tokenCalls(t, client)
    const code = await codeFor()
    const cases: [Record<string, string>, string][] = [
      [{ grant_type: 'authorization_code', redirect_uri: CALLBACK }, 'code is required'],
      [{ grant_type: 'authorization_code', code }, 'redirect_uri is required'],
      [{ grant_type: 'refresh_token' }, 'refresh_token is required'],
    ]
    for (const [fields, description] of cases) {
      const response = await tokenRequest(t.app, fields, basic())
      expect(response.statusCode, description).toBe(400)
      expect(response.json()).toEqual({ error: 'invalid_request', error_description: description })
    }
    // Refused before the code was used: it is still good.
    expect((await exchange(code)).statusCode).toBe(200)
  })

  test('refuses a refresh token that was never issued, or issued to another client, without disturbing its owner', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const tokens = (await exchange(await codeFor())).json()
    const other = await registerApp(t.app)
    for (const [token, as] of [
      [randomBytes(32).toString('base64url'), client],
      [tokens.refresh_token, other],
    ] as const) {
      const response = await refresh(token, as)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual({
        error: 'invalid_grant',
        error_description: 'The refresh token is unknown, revoked or expired',
      })
    }
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(200)
  })

  test('refuses a refresh token past its 90 days', async ({ t, oauthApp: client }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const tokens = (await exchange(await codeFor())).json()
    const hash = createHash('sha256').update(tokens.refresh_token).digest('hex')
    await t.app.platform.db.execute(
      sql`update oauth_refresh_tokens set expires_at = now() - interval '1 second' where token_hash = ${hash}`,
    )
    expect((await refresh(tokens.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('gives tokens to one of two simultaneous exchanges of a code, and revokes them for the replay', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const code = await codeFor()
    const answers = await Promise.all([exchange(code), exchange(code)])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 400])
    const won = answers.find((answer) => answer.statusCode === 200)?.json()
    expect(answers.find((answer) => answer.statusCode === 400)?.json()).toMatchObject({
      error: 'invalid_grant',
    })
    expect((await refresh(won.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('answers two simultaneous refreshes with the same new refresh token: the grant does not fork (RFC 9700 4.14.2)', async ({
    t,
    oauthApp: client,
  }) => {
    const { codeFor, exchange, refresh } = tokenCalls(t, client)
    const tokens = (await exchange(await codeFor())).json()
    const answers = await Promise.all([refresh(tokens.refresh_token), refresh(tokens.refresh_token)])
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200])
    const [first, second] = answers.map((answer) => answer.json().refresh_token)
    expect(second).toBe(first)
    expect((await refresh(first)).statusCode).toBe(200)
  })
})

/** Tokens for solo@flow.example through the pages, and refreshes as `client`, with extra fields given. */
function refreshCalls(t: TestApp, client: RegisteredApp) {
  const { authorize, exchange } = flowOf(t, client)
  const tokensOf = async () => (await exchange((await authorize('solo@flow.example')).code)).json()
  const refresh = (token: string, extra: Record<string, string> = {}) =>
    tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token, ...extra }, [
      client._id,
      client.client_secret,
    ])
  return { tokensOf, refresh }
}

/** The user signs in to the sub-account (an agency's client: its parent is the owner account). */
describe('the code and refresh grants, client authentication, introspection and CORS', () => {
  test.beforeAll(async ({ t, subAccount }) => {
    await createUser(t.app, 'solo@flow.example', [subAccount.accountId])
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

  test('authenticates a public app by its client_id alone, and refuses a client secret sent for it (invalid_client)', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize } = flowOf(t, client)
    const spa = await registerApp(t.app, { redirect_uris: [CALLBACK] })
    const pkce = pkcePair()
    const query = {
      response_type: 'code',
      client_id: spa._id,
      redirect_uri: CALLBACK,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
    }
    const exchangeAs = (code: string, credentials: Record<string, string>) =>
      tokenRequest(t.app, {
        grant_type: 'authorization_code',
        code,
        redirect_uri: CALLBACK,
        code_verifier: pkce.verifier,
        client_id: spa._id,
        ...credentials,
      })
    // The secret it was registered with, from before it was made public.
    await t.app.inject({
      method: 'PATCH',
      url: `/v1/admin/oauth/apps/${spa._id}`,
      headers: adminHeaders,
      payload: { public: true },
    })
    const { code } = await authorize('solo@flow.example', query)
    const withSecret = await exchangeAs(code, { client_secret: spa.client_secret })
    expect(withSecret.statusCode).toBe(401)
    expect(withSecret.json()).toMatchObject({ error: 'invalid_client' })
    const withBasic = await tokenRequest(
      t.app,
      { grant_type: 'authorization_code', code, redirect_uri: CALLBACK, code_verifier: pkce.verifier },
      [spa._id, spa.client_secret],
    )
    expect(withBasic.statusCode).toBe(401)
    expect(withBasic.headers['www-authenticate']).toMatch(/^Basic realm="oauth"/)
    // Refused before the code was looked at: the client_id alone still exchanges it.
    expect((await exchangeAs(code, {})).statusCode).toBe(200)
  })

  test('rotates refresh tokens; within the grace period a retry of the replaced one gets the same new token, once; then it revokes the grant', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, tokensOf } = refreshCalls(t, client)
    const first = await tokensOf()
    const second = await refresh(first.refresh_token)
    expect(second.statusCode).toBe(200)
    expect(second.json()).toMatchObject({
      token_type: 'Bearer',
      expires_in: 3600,
      scope: 'crm.contacts.read sites.read',
    })
    expect(second.json().refresh_token).not.toBe(first.refresh_token)

    // A client that lost that answer retries with the first token: the same refresh token, a new access token.
    const retried = await refresh(first.refresh_token)
    expect(retried.statusCode).toBe(200)
    expect(retried.json().refresh_token).toBe(second.json().refresh_token)
    expect(retried.json().access_token).not.toBe(second.json().access_token)

    // Once: presented again, the first token is taken as stolen and the whole grant goes.
    expect((await refresh(first.refresh_token)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token was already used; the grant is revoked',
    })
    expect((await refresh(second.json().refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('keeps the client’s new refresh token working when a replaced one is replayed within the grace period, and revokes the grant when it is replayed after the new one was used', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, tokensOf } = refreshCalls(t, client)
    const stolen = (await tokensOf()).refresh_token
    const clients = (await refresh(stolen)).json()
    // The attacker replays the stolen token within the grace period: no token of its own.
    const replayed = await refresh(stolen)
    expect(replayed.json().refresh_token).toBe(clients.refresh_token)
    const next = await refresh(clients.refresh_token)
    expect(next.statusCode).toBe(200)

    // A replaced token whose successor was used already: the grant goes, its access tokens with it.
    const other = await tokensOf()
    const second = (await refresh(other.refresh_token)).json()
    const third = (await refresh(second.refresh_token)).json()
    expect(
      (await t.app.inject({ url: '/v1/contacts', headers: bearer(third.access_token) })).statusCode,
    ).toBe(200)
    expect((await refresh(other.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    expect((await refresh(third.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    expect(
      (await t.app.inject({ url: '/v1/contacts', headers: bearer(third.access_token) })).statusCode,
    ).toBe(401)
  })

  test('revokes the grant for a replaced refresh token presented after the grace period', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, tokensOf } = refreshCalls(t, client)
    const first = await tokensOf()
    const second = (await refresh(first.refresh_token)).json()
    await t.app.platform.db.execute(
      sql`update oauth_refresh_tokens set replaced_at = now() - interval '2 minutes' where token_hash = ${keptHash(first.refresh_token)}`,
    )
    expect((await refresh(first.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    expect((await refresh(second.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })

  test('refuses a refresh asking for a scope beyond the grant (RFC 6749 6: invalid_scope) without using the token, and narrows the access token to a smaller one', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, tokensOf } = refreshCalls(t, client)
    const introspect = (token: string) => postAsClient(t.app, 'introspect', { token }, client)
    const first = await tokensOf()
    expect(first.scope).toBe('crm.contacts.read sites.read')
    const beyond = await refresh(first.refresh_token, { scope: 'crm.contacts.read analytics.read' })
    expect(beyond.statusCode).toBe(400)
    expect(beyond.json()).toEqual({
      error: 'invalid_scope',
      error_description: 'The requested scope exceeds the scope granted by the resource owner',
    })
    expect((await introspect(first.refresh_token)).json()).toMatchObject({ active: true })

    const narrower = await refresh(first.refresh_token, { scope: 'sites.read' })
    expect(narrower.json().scope).toBe('sites.read')
    expect((await introspect(narrower.json().access_token)).json()).toMatchObject({ scope: 'sites.read' })
    // The grant keeps its scope: the next refresh may ask for all of it again.
    expect((await introspect(narrower.json().refresh_token)).json()).toMatchObject({
      scope: 'crm.contacts.read sites.read',
    })
    const same = await refresh(narrower.json().refresh_token, { scope: 'sites.read crm.contacts.read' })
    expect(same.json().scope).toBe('crm.contacts.read sites.read')
    expect((await refresh(same.json().refresh_token)).json().scope).toBe('crm.contacts.read sites.read')
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
