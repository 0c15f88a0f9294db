import { randomBytes } from 'node:crypto'
import { describe, expect } from 'vitest'
import { type RegisteredApp, registerApp, tokenRequest } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

/** The authorization server's own rate limits, lowered to 2 so that a test reaches them. */
test.override('appEnv', { RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '2', RATE_LIMIT_OAUTH_TOKEN_PER_HOUR: '2' })

describe('authorize rate limit', () => {
  test('answers 10 requests a minute per IP on /authorize (here 2), then 429', async ({ t }) => {
    const open = (ip: string) =>
      t.app.inject({ url: '/v1/auth/oauth/authorize?client_id=x&user_locale=es', remoteAddress: ip })
    // Fresh addresses each run: with Redis the counts outlive the test.
    const [busy, quiet] = [
      `2001:db8::${randomBytes(4).toString('hex')}`,
      `2001:db8::${randomBytes(4).toString('hex')}`,
    ]
    expect([(await open(busy)).statusCode, (await open(busy)).statusCode]).toEqual([400, 400])
    const limited = await open(busy)
    expect(limited.statusCode).toBe(429)
    // A page for the person in the browser, in their language, with the time to wait.
    expect(limited.headers['content-type']).toBe('text/html; charset=utf-8')
    expect(limited.body).toContain('Demasiados intentos')
    const retryAfter = Number(limited.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    // The real wait, not "a minute".
    expect(limited.body).toContain(
      retryAfter < 60 ? `dentro de ${retryAfter} segundo` : 'dentro de 1 minuto.',
    )
    expect((await open(quiet)).statusCode).toBe(400)
  })
})

describe('token endpoint rate limit', () => {
  test('counts 100 an hour per authenticated client (here 2), so that no one can spend another client’s quota', async ({
    t,
  }) => {
    const [a, b] = [await registerApp(t.app), await registerApp(t.app)]
    const asClient = (app: RegisteredApp, secret = app.client_secret) =>
      tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: 'unknown' }, [app._id, secret])
    for (let i = 0; i < 3; i++) expect((await asClient(a, 'wrong')).statusCode).toBe(401)
    expect([(await asClient(a)).statusCode, (await asClient(a)).statusCode]).toEqual([400, 400])
    const limited = await asClient(a)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ error: 'too_many_requests' })
    expect((await asClient(b)).statusCode).toBe(400)
  })
})
