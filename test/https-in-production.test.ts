import type { FastifyInstance, InjectOptions } from 'fastify'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { UNTRUSTED_PROXY } from '../src/platform/http/https-required.js'
import { signedEventHeaders } from './fakes/sendgrid.js'
import { buildTestApp, captureLogs, type TestApp } from './helpers/app.js'
import { createAccount, createTenant } from './helpers/fixtures.js'
import { LEADS_APP, signedLeadPost } from './helpers/leads.js'
import { createUser, obtainTokens, postAsClient, registerApp, TOKEN, tokenRequest } from './helpers/oauth.js'
import { behindTlsProxy, FROM_A_PROXY, PRODUCTION_ENV, PRODUCTION_EVENT_KEYS } from './helpers/production.js'
import { chargeFor, stripePost } from './helpers/reviews.js'
import { test } from './helpers/tenant-test.js'

/**
 * The spec: "HTTPS is required for all authorization and webhook endpoints in production". In production
 * those routes refuse a request that did not come over HTTPS, directly or through a proxy TRUST_PROXY
 * trusts (its `X-Forwarded-Proto`). `app.inject` is plain HTTP from 127.0.0.1.
 */

const STRIPE_SECRET = 'whsec_https_in_production'
const env = {
  ...PRODUCTION_ENV,
  LOG_LEVEL: 'warn',
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  STRIPE_WEBHOOK_SECRET: STRIPE_SECRET,
  SOCIALNET_APP_SECRET: LEADS_APP.appSecret,
  SOCIALNET_VERIFY_TOKEN: LEADS_APP.verifyToken,
}
// The file's app: production, trusting its TLS proxy's network (PRODUCTION_ENV), which 127.0.0.1 is not in.
test.override('appEnv', env)
const logs = captureLogs()
test.override('appOptions', { logStream: logs.stream })

const REFUSED = { success: false, errno: 400, message: 'HTTPS is required' }
const REFUSED_OAUTH = { error: 'invalid_request', error_description: 'HTTPS is required' }

/**
 * The authorization server's endpoints but its public discovery documents, and the webhooks providers call,
 * as the OpenAPI document names them.
 */
const REQUIRING_HTTPS = [
  'GET /v1/auth/oauth/findUsers',
  'GET /v1/auth/oauth/authorize',
  'POST /v1/auth/oauth/authorize',
  'POST /v1/auth/oauth/authorize/account',
  'POST /v1/auth/oauth/authorize/consent',
  'POST /v1/auth/oauth/token',
  'POST /v1/auth/oauth/introspect',
  'POST /v1/auth/oauth/revoke',
  'GET /v1/auth/oauth/grants',
  'DELETE /v1/auth/oauth/grants/{client_id}',
  'POST /v1/integrations/mailprovider/webhook',
  'POST /v1/e/mailprovider/webhook',
  'POST /v1/integrations/mailprovider/webhook/inbound',
  'POST /v1/e/mailprovider/webhook/inbound',
  'POST /reviews/webhook/paymentprovider/charge',
  'POST /v1/reviews/webhook/paymentprovider/charge',
  'POST /reviews/webhook/orderprovider/order',
  'POST /v1/reviews/webhook/orderprovider/order',
  'POST /reviews/webhook/sms/inbound',
  'POST /v1/reviews/webhook/sms/inbound',
  'GET /webhooks/socialnet/leads',
  'POST /webhooks/socialnet/leads',
]

/** The operations of the app's OpenAPI document marked `x-requires-https`, with the statuses they document. */
async function operationsRequiringHttps(app: FastifyInstance) {
  const paths = (await app.inject({ url: '/docs/json' })).json().paths as Record<
    string,
    Record<string, { 'x-requires-https'?: boolean; responses: Record<string, unknown> }>
  >
  return Object.entries(paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation['x-requires-https'])
      .map(([method, operation]) => ({
        method: method.toUpperCase() as 'GET',
        path,
        route: `${method.toUpperCase()} ${path}`,
        statuses: Object.keys(operation.responses),
      })),
  )
}

const urlOf = (path: string) => path.replace(/\{[^}]+\}/g, '0123456789abcdef01234567')

describe('HTTPS in production, reached other than through the proxy TRUST_PROXY trusts', () => {
  test('marks the authorization and webhook endpoints, and no other, each documenting its 400', async ({
    t,
  }) => {
    const operations = await operationsRequiringHttps(t.app)
    expect(operations.map(({ route }) => route).sort()).toEqual([...REQUIRING_HTTPS].sort())
    expect(operations.filter(({ statuses }) => !statuses.includes('400'))).toEqual([])
  })

  test('refuses each of them over plain HTTP, and when X-Forwarded-Proto comes from no trusted proxy', async ({
    t,
  }) => {
    const operations = await operationsRequiringHttps(t.app)
    const answers = await Promise.all(
      operations.flatMap(({ method, path, route }) =>
        [{}, FROM_A_PROXY].map(async (headers) => {
          const response = await t.app.inject({ method, url: urlOf(path), headers })
          return `${route} ${response.statusCode} ${response.body.includes('HTTPS is required')}`
        }),
      ),
    )
    expect(answers.filter((answer) => !answer.endsWith(' 400 true'))).toEqual([])
  })

  test('warns naming TRUST_PROXY, the header and the peer when it refuses an https said by a peer it does not trust', async ({
    t,
  }) => {
    const said = await t.app.inject({
      method: 'POST',
      url: TOKEN,
      remoteAddress: '192.0.2.7',
      headers: FROM_A_PROXY,
    })
    expect(said.json()).toEqual(REFUSED_OAUTH)
    const plain = await t.app.inject({ method: 'POST', url: TOKEN, remoteAddress: '192.0.2.8' })
    expect(plain.json()).toEqual(REFUSED_OAUTH)
    // This test's two peers (the file's other tests warn from 127.0.0.1).
    const warnings = logs.lines.filter(
      ({ msg, peer }) => msg === UNTRUSTED_PROXY && String(peer).startsWith('192.0.2.'),
    )
    // The plain HTTP request said nothing of https: a client's mistake, not the operator's.
    expect(warnings).toEqual([expect.objectContaining({ peer: '192.0.2.7', forwardedProto: 'https' })])
    expect(UNTRUSTED_PROXY).toContain('TRUST_PROXY')
  })

  test("answers the token endpoint, revocation and introspection in RFC 6749's form, before the client authenticates", async ({
    t,
    oauthApp: client,
  }) => {
    for (const headers of [{}, FROM_A_PROXY]) {
      const token = await t.app.inject({
        method: 'POST',
        url: TOKEN,
        headers: { ...headers, origin: 'https://spa.example.com' },
        payload: { grant_type: 'refresh_token', refresh_token: 'x', client_id: client._id },
      })
      expect(token.statusCode).toBe(400)
      expect(token.json()).toEqual(REFUSED_OAUTH)
      expect(token.headers['cache-control']).toBe('no-store')
      // A browser app reads the refusal: the endpoint's CORS headers stay on it.
      expect(token.headers['access-control-allow-origin']).toBe('*')
    }
    // With the right secret too: nothing sent over plain HTTP is acted upon.
    const exchange = await tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'x' }, [
      client._id,
      client.client_secret,
    ])
    expect(exchange.json()).toEqual(REFUSED_OAUTH)
    for (const endpoint of ['revoke', 'introspect'] as const) {
      const response = await postAsClient(t.app, endpoint, { token: 'x' }, client)
      expect(response.statusCode).toBe(400)
      expect(response.json()).toEqual(REFUSED_OAUTH)
    }
  })

  test('answers the webhooks in the error envelope, a signed post as well', async ({ t, owner }) => {
    const posts: InjectOptions[] = [
      stripePost(STRIPE_SECRET, chargeFor(owner, { email: 'grace@example.com' })),
      signedLeadPost({ object: 'page', entry: [] }),
      { method: 'POST', url: '/v1/e/mailprovider/webhook', payload: [] },
      {
        method: 'GET',
        url: '/webhooks/socialnet/leads?hub.mode=subscribe&hub.challenge=1&hub.verify_token=leads-verify-token',
      },
    ]
    for (const post of posts) {
      for (const headers of [{}, FROM_A_PROXY]) {
        const response = await t.app.inject({ ...post, headers: { ...post.headers, ...headers } })
        expect(response.statusCode, post.url as string).toBe(400)
        expect(response.json(), post.url as string).toEqual(REFUSED)
      }
    }
  })

  test('serves the discovery documents over plain HTTP: public, no credential in them', async ({ t }) => {
    const jwks = await t.app.inject({ url: '/.well-known/jwks.json' })
    expect(jwks.json().keys).toHaveLength(1)
    const metadata = await t.app.inject({ url: '/.well-known/oauth-authorization-server' })
    expect(metadata.json().token_endpoint).toBe('https://platform.example.com/v1/auth/oauth/token')
  })

  test('shows the refusal of an authorization page as a page, setting no cookie and redirecting nowhere', async ({
    t,
    oauthApp: client,
  }) => {
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: client._id,
      redirect_uri: client.redirect_uris[0] as string,
    })
    const page = await t.app.inject({ url: `/v1/auth/oauth/authorize?${query}` })
    expect(page.statusCode).toBe(400)
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(page.body).toContain('HTTPS is required')
    expect(page.headers.location).toBeUndefined()
    expect(page.headers['set-cookie']).toBeUndefined()
    const spanish = await t.app.inject({ url: `/v1/auth/oauth/authorize?${query}&user_locale=es` })
    expect(spanish.body).toContain('Se requiere HTTPS')
  })
})

describe('HTTPS in production, behind a proxy TRUST_PROXY trusts', () => {
  let proxied: TestApp

  beforeAll(async () => {
    proxied = await buildTestApp({ ...env, TRUST_PROXY: '127.0.0.1' })
  })
  afterAll(() => proxied?.close())

  test('serves the authorization pages, the token endpoint and introspection when the proxy says https', async () => {
    const app = behindTlsProxy(proxied.app)
    const client = await registerApp(app)
    await createUser(app, 'proxied@https.example', [await createAccount(app, { name: 'Proxied' })])
    const tokens = await obtainTokens(app, client, 'proxied@https.example')
    expect(tokens.access_token).toEqual(expect.any(String))
    const introspected = await postAsClient(app, 'introspect', { token: tokens.access_token }, client)
    expect(introspected.json()).toMatchObject({ active: true, client_id: client._id })
    const metadata = await app.inject({ url: '/.well-known/oauth-authorization-server' })
    expect(metadata.json().token_endpoint).toBe('https://platform.example.com/v1/auth/oauth/token')
  })

  test("serves the webhooks when the proxy says https: SendGrid's events, a Stripe payment, Meta's check and its lead event", async () => {
    const app = behindTlsProxy(proxied.app)
    const events = await app.inject({
      method: 'POST',
      url: '/v1/e/mailprovider/webhook',
      headers: {
        'content-type': 'application/json',
        ...signedEventHeaders(PRODUCTION_EVENT_KEYS.privateKey, '[]'),
      },
      payload: '[]',
    })
    expect(events.json()).toEqual({ success: true, message: 'SUCCESS' })
    const payer = await createTenant(app, { name: 'Paying' })
    const payment = stripePost(STRIPE_SECRET, chargeFor(payer, { email: 'grace@example.com' }))
    expect((await app.inject(payment)).json()).toEqual({ success: true, message: 'SUCCESS' })
    const check = await app.inject({
      url: `/webhooks/socialnet/leads?hub.mode=subscribe&hub.challenge=4242&hub.verify_token=${LEADS_APP.verifyToken}`,
    })
    expect(check.body).toBe('4242')
    const lead = await app.inject(signedLeadPost({ object: 'page', entry: [] }))
    expect(lead.body).toBe('EVENT_RECEIVED')
  })

  test('refuses what the proxy says came over plain HTTP, and https said by a peer it does not trust', async () => {
    const { app } = proxied
    const plain = await app.inject({
      method: 'POST',
      url: '/reviews/webhook/paymentprovider/charge',
      headers: { 'x-forwarded-proto': 'http' },
    })
    expect(plain.json()).toEqual(REFUSED)
    const direct = await app.inject({ method: 'POST', url: TOKEN, payload: {} })
    expect(direct.json()).toEqual(REFUSED_OAUTH)
    const stranger = await app.inject({
      method: 'POST',
      url: TOKEN,
      remoteAddress: '203.0.113.9',
      headers: FROM_A_PROXY,
      payload: {},
    })
    expect(stranger.json()).toEqual(REFUSED_OAUTH)
  })
})
