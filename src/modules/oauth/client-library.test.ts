import { createRemoteJWKSet, type JWTPayload, jwtVerify } from 'jose'
import * as oauth from 'oauth4webapi'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, listenTestApp, type TestApp } from '../../../test/helpers/app.js'
import {
  AUTHORIZE,
  createUser,
  PASSWORD,
  type RegisteredApp,
  registerApp,
} from '../../../test/helpers/oauth.js'

/** oauth4webapi refuses plain http unless told: the test server listens on http://127.0.0.1. */
const insecure = { [oauth.allowInsecureRequests]: true } as const

const CALLBACK = 'https://hub.example.com/callback'
const SPA_CALLBACK = 'http://127.0.0.1:5173/cb'

/**
 * The authorization pages over real HTTP, as a browser without script goes through them: the sign-in form,
 * then consent (allowed) unless it was remembered. The URL the server finally redirects to.
 */
async function authorizeOverHttp(authorizationUrl: URL, email: string): Promise<URL> {
  const signIn = await fetch(authorizationUrl, { redirect: 'manual' })
  expect(signIn.status).toBe(200)
  const cookie = (signIn.headers.getSetCookie()[0] ?? '').split(';')[0] as string
  // Each form posts relative to the page it is on, as a browser resolves it.
  const submit = async (html: string, pageUrl: string, fields: Record<string, string>) => {
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1]
    const token = /name="token" value="([^"]+)"/.exec(html)?.[1]
    if (!action || !token) throw new Error(`no form on the page: ${html}`)
    return fetch(new URL(action, pageUrl), {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token, ...fields }),
    })
  }
  let answer = await submit(await signIn.text(), signIn.url, { email, password: PASSWORD })
  if (answer.status === 200) answer = await submit(await answer.text(), answer.url, { decision: 'allow' })
  expect(answer.status).toBe(303)
  return new URL(answer.headers.get('location') as string)
}

describe('the authorization server driven by a standard client library (oauth4webapi) over HTTP', () => {
  let t: TestApp & { baseUrl: string }
  let as: oauth.AuthorizationServer
  let confidential: RegisteredApp
  let spa: RegisteredApp
  let userId: string
  let agencyId: string
  let branchId: string

  beforeAll(async () => {
    t = await listenTestApp({ RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000' })
    const account = async (payload: object) =>
      (
        await t.app.inject({ method: 'POST', url: '/v1/admin/accounts', headers: adminHeaders, payload })
      ).json().data._id as string
    agencyId = await account({ name: 'Agency' })
    branchId = await account({ name: 'Branch', parent_account: agencyId })
    userId = (await createUser(t.app, 'solo@library.example', [branchId]))._id
    confidential = await registerApp(t.app)
    spa = await registerApp(t.app, { public: true, redirect_uris: [SPA_CALLBACK] })
    const issuer = new URL(t.baseUrl)
    as = await oauth.processDiscoveryResponse(
      issuer,
      await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure }),
    )
  })
  afterAll(() => t?.close())

  /** The authorization request the library's user would build: PKCE S256 and a random state. */
  async function authorize(client: oauth.Client, redirectUri: string) {
    const codeVerifier = oauth.generateRandomCodeVerifier()
    const state = oauth.generateRandomState()
    const url = new URL(as.authorization_endpoint as string)
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope: 'crm.contacts.read sites.read',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    }).toString()
    const callback = await authorizeOverHttp(url, 'solo@library.example')
    expect(`${callback.origin}${callback.pathname}`).toBe(redirectUri)
    // Checks state, and iss against the discovered issuer (RFC 9207), as the metadata announces it.
    const params = oauth.validateAuthResponse(as, client, callback, state)
    return { params, codeVerifier }
  }

  /** Verifies an access token as a resource server would: the published JWKS, issuer, audience, typ. */
  async function verifyAccessToken(token: string): Promise<JWTPayload> {
    const jwks = createRemoteJWKSet(new URL(as.jwks_uri as string))
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: t.baseUrl,
      audience: t.baseUrl,
      typ: 'at+jwt',
      algorithms: ['ES256'],
    })
    expect(protectedHeader).toMatchObject({ alg: 'ES256', typ: 'at+jwt', kid: expect.any(String) })
    return payload
  }

  /** The library's request and response steps of one endpoint, for a client and its authentication. */
  const exchange = async (
    client: oauth.Client,
    auth: oauth.ClientAuth,
    params: URLSearchParams,
    redirectUri: string,
    codeVerifier: string,
  ) =>
    oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(
        as,
        client,
        auth,
        params,
        redirectUri,
        codeVerifier,
        insecure,
      ),
    )
  const refresh = async (client: oauth.Client, auth: oauth.ClientAuth, token: string) =>
    oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, token, insecure),
    )
  const introspect = async (client: oauth.Client, auth: oauth.ClientAuth, token: string) =>
    oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, token, insecure),
    )
  const revoke = async (client: oauth.Client, auth: oauth.ClientAuth, token: string) =>
    oauth.processRevocationResponse(await oauth.revocationRequest(as, client, auth, token, insecure))

  async function expectRefused(promise: Promise<unknown>, error: string) {
    const refused = await promise.then(
      () => undefined,
      (reason: unknown) => reason,
    )
    expect(refused).toBeInstanceOf(oauth.ResponseBodyError)
    expect((refused as oauth.ResponseBodyError).error).toBe(error)
  }

  it('is discovered at its RFC 8414 metadata, whose issuer is the base URL it is reached at', () => {
    expect(as).toMatchObject({
      issuer: t.baseUrl,
      authorization_endpoint: `${t.baseUrl}${AUTHORIZE}`,
      token_endpoint: `${t.baseUrl}/v1/auth/oauth/token`,
      revocation_endpoint: `${t.baseUrl}/v1/auth/oauth/revoke`,
      introspection_endpoint: `${t.baseUrl}/v1/auth/oauth/introspect`,
      jwks_uri: `${t.baseUrl}/.well-known/jwks.json`,
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    })
    expect(as.token_endpoint_auth_methods_supported).toEqual(
      expect.arrayContaining(['client_secret_basic', 'client_secret_post', 'none']),
    )
  })

  it('serves a confidential client using client_secret_basic: code with PKCE, JWT access token, refresh, introspection and revocation', async () => {
    const client: oauth.Client = { client_id: confidential._id }
    const auth = oauth.ClientSecretBasic(confidential.client_secret)
    const { params, codeVerifier } = await authorize(client, CALLBACK)
    expect(params.get('iss')).toBe(t.baseUrl)

    const tokens = await exchange(client, auth, params, CALLBACK, codeVerifier)
    expect(tokens).toMatchObject({
      token_type: 'bearer',
      expires_in: 3600,
      scope: 'crm.contacts.read sites.read',
      refresh_token: expect.any(String),
    })
    const claims = await verifyAccessToken(tokens.access_token)
    expect(claims).toMatchObject({
      type: 'access_token',
      uid: userId,
      account_id: branchId,
      parent_account: agencyId,
      client_id: confidential._id,
      scope: 'crm.contacts.read sites.read',
      iss: t.baseUrl,
      aud: t.baseUrl,
      sub: userId,
    })
    expect(claims.exp).toBeGreaterThan(Date.now() / 1000)
    // A resource server using the library's RFC 9068 check accepts it (it requires sub, jti, client_id).
    const atClaims = await oauth.validateJwtAccessToken(
      as,
      new Request(`${t.baseUrl}/v1/contacts`, {
        headers: { authorization: `Bearer ${tokens.access_token}` },
      }),
      t.baseUrl,
      insecure,
    )
    expect(atClaims).toMatchObject({ sub: userId, client_id: confidential._id })
    expect((claims.exp as number) - (claims.iat as number)).toBe(3600)

    const introspected = await introspect(client, auth, tokens.access_token)
    expect(introspected).toMatchObject({
      active: true,
      client_id: confidential._id,
      sub: userId,
      scope: 'crm.contacts.read sites.read',
      exp: claims.exp,
    })

    const refreshed = await refresh(client, auth, tokens.refresh_token as string)
    expect(refreshed).toMatchObject({ token_type: 'bearer', expires_in: 3600 })
    expect(refreshed.refresh_token).toEqual(expect.any(String))
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token)
    expect(await verifyAccessToken(refreshed.access_token)).toMatchObject({
      account_id: branchId,
      scope: 'crm.contacts.read sites.read',
    })
    const refreshIntrospected = await introspect(client, auth, refreshed.refresh_token as string)
    expect(refreshIntrospected).toMatchObject({ active: true, token_type: 'refresh_token' })
    // Refresh tokens live 90 days (the two times are taken a moment apart, hence the second allowed).
    expect(
      Math.abs((refreshIntrospected.exp as number) - (refreshIntrospected.iat as number) - 90 * 86_400),
    ).toBeLessThanOrEqual(1)

    await expect(revoke(client, auth, refreshed.refresh_token as string)).resolves.toBeUndefined()
    expect(await introspect(client, auth, refreshed.refresh_token as string)).toEqual({ active: false })
    await expectRefused(refresh(client, auth, refreshed.refresh_token as string), 'invalid_grant')
    // An access token of the revoked grant is an invalid token now: answered 200 (RFC 7009 2.2).
    await expect(revoke(client, auth, tokens.access_token)).resolves.toBeUndefined()
  })

  it('serves a confidential client using client_secret_post the same way, and refuses it a wrong secret', async () => {
    const client: oauth.Client = { client_id: confidential._id }
    const auth = oauth.ClientSecretPost(confidential.client_secret)
    const { params, codeVerifier } = await authorize(client, CALLBACK)
    const tokens = await exchange(client, auth, params, CALLBACK, codeVerifier)
    expect(await verifyAccessToken(tokens.access_token)).toMatchObject({ client_id: confidential._id })

    const wrong = oauth.ClientSecretPost('not-the-secret')
    const refused = await oauth
      .processRefreshTokenResponse(
        as,
        client,
        await oauth.refreshTokenGrantRequest(as, client, wrong, tokens.refresh_token as string, insecure),
      )
      .catch((error: unknown) => error)
    // 401 invalid_client with a Basic challenge (RFC 6749 5.2), which the library reports as such.
    expect(refused).toBeInstanceOf(oauth.WWWAuthenticateChallengeError)
    expect((refused as oauth.WWWAuthenticateChallengeError).status).toBe(401)
    expect((refused as oauth.WWWAuthenticateChallengeError).cause[0]?.scheme).toBe('basic')

    const refreshed = await refresh(client, auth, tokens.refresh_token as string)
    expect(await introspect(client, auth, refreshed.refresh_token as string)).toMatchObject({
      active: true,
      client_id: confidential._id,
      account_id: branchId,
    })
    await revoke(client, auth, refreshed.refresh_token as string)
    await expectRefused(refresh(client, auth, refreshed.refresh_token as string), 'invalid_grant')
  })

  it('serves a public client (no secret, client_id only) that proves itself with PKCE', async () => {
    const client: oauth.Client = { client_id: spa._id, token_endpoint_auth_method: 'none' }
    const auth = oauth.None()
    const { params, codeVerifier } = await authorize(client, SPA_CALLBACK)

    // The code is bound to the verifier: another one does not get tokens, and spends the code.
    const stranger = await authorize(client, SPA_CALLBACK)
    await expectRefused(
      exchange(client, auth, stranger.params, SPA_CALLBACK, oauth.generateRandomCodeVerifier()),
      'invalid_grant',
    )

    const tokens = await exchange(client, auth, params, SPA_CALLBACK, codeVerifier)
    expect(await verifyAccessToken(tokens.access_token)).toMatchObject({
      client_id: spa._id,
      uid: userId,
      account_id: branchId,
    })
    const refreshed = await refresh(client, auth, tokens.refresh_token as string)
    expect(refreshed.expires_in).toBe(3600)
    expect(await introspect(client, auth, refreshed.access_token)).toMatchObject({
      active: true,
      client_id: spa._id,
    })
    await revoke(client, auth, refreshed.refresh_token as string)
    await expectRefused(refresh(client, auth, refreshed.refresh_token as string), 'invalid_grant')
  })
})
