import Fastify from 'fastify'
import { exportPKCS8, exportSPKI, generateKeyPair, SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import {
  adminHeaders,
  bearer,
  buildTestApp,
  TEST_JWT_SECRET,
  type TestApp,
} from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { createAccountBudget } from '../http/account-budget.js'
import { registerErrorHandling } from '../http/error-handler.js'
import { createPlatformTokens } from './platform-jwt.js'
import { registerAuth } from './plugin.js'

const ACCOUNT = '650000000000000000000001'
const USER = '650000000000000000000002'
const secretKey = new TextEncoder().encode(TEST_JWT_SECRET)
const nowSeconds = () => Math.floor(Date.now() / 1000)

function sign(claims: Record<string, unknown>, expiresAt: number, key: Uint8Array = secretKey) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(expiresAt)
    .sign(key)
}

describe('bearer JWT on account-scoped routes', () => {
  const url = '/v1/e/changelog/posts'

  const statusWith = async (t: TestApp, headers: Record<string, string>) =>
    (await t.app.inject({ url, headers })).statusCode

  test.for<[string, Record<string, string>]>([
    ['no header', {}],
    ['another scheme', { authorization: 'Basic dXNlcjpwYXNz' }],
    ['a malformed token', { authorization: 'Bearer not.a.jwt' }],
    ['a scheme without a token', { authorization: 'Bearer' }],
    ['a token followed by another word', { authorization: 'Bearer abc.def.ghi extra' }],
  ])('answers 401 in the error envelope for %s', async ([_name, headers], { t }) => {
    // A route in the shared envelope: the changelog feed's errors have the spec's envelope of their own.
    const response = await t.app.inject({ url: '/v1/contacts', headers })
    expect(response.statusCode).toBe(401)
    expect(response.json()).toMatchObject({ success: false, errno: 401, message: 'Unauthorized' })
  })

  test('refuses a token signed with another secret', async ({ t }) => {
    const token = await sign(
      { uid: USER, account_id: ACCOUNT },
      nowSeconds() + 60,
      new TextEncoder().encode('x'.repeat(40)),
    )
    expect(await statusWith(t, bearer(token))).toBe(401)
  })

  test('refuses an unsigned token', async ({ t }) => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')
    const payload = Buffer.from(
      JSON.stringify({ uid: USER, account_id: ACCOUNT, exp: nowSeconds() + 60 }),
    ).toString('base64url')
    expect(await statusWith(t, bearer(`${header}.${payload}.`))).toBe(401)
  })

  test('refuses a token without uid or account_id', async ({ t }) => {
    expect(await statusWith(t, bearer(await sign({ uid: USER }, nowSeconds() + 60)))).toBe(401)
  })

  test('accepts a token expired less than 5 minutes ago (clock skew) and refuses one expired longer', async ({
    t,
  }) => {
    const claims = { uid: USER, account_id: ACCOUNT }
    expect(await statusWith(t, bearer(await sign(claims, nowSeconds() - 240)))).toBe(200)
    const expired = await t.app.inject({ url, headers: bearer(await sign(claims, nowSeconds() - 360)) })
    expect(expired.statusCode).toBe(401)
    expect(expired.json().additional_info).toBe('token expired')
  })

  test('accepts a remembered token again, in any case of "Bearer", until it expires', async ({ t }) => {
    const token = await sign({ uid: USER, account_id: ACCOUNT }, nowSeconds() - 290)
    expect(await statusWith(t, bearer(token))).toBe(200)
    expect(await statusWith(t, { authorization: `bearer ${token}` })).toBe(200)
    vi.useFakeTimers({ toFake: ['Date'] })
    try {
      vi.setSystemTime(Date.now() + 20_000)
      expect(await statusWith(t, bearer(token))).toBe(401)
    } finally {
      vi.useRealTimers()
    }
  })

  test("refuses a remembered token's signature under another payload", async ({ t }) => {
    const token = await sign({ uid: USER, account_id: ACCOUNT }, nowSeconds() + 60)
    expect(await statusWith(t, bearer(token))).toBe(200)
    const [header, , signature] = token.split('.')
    const otherAccount = Buffer.from(
      JSON.stringify({ uid: USER, account_id: '650000000000000000000009', exp: nowSeconds() + 60 }),
    ).toString('base64url')
    expect(await statusWith(t, bearer(`${header}.${otherAccount}.${signature}`))).toBe(401)
  })
})

describe('platform JWT with a public key (ES256)', () => {
  let t: TestApp
  let tenant: Tenant
  beforeAll(async () => {
    const { publicKey, privateKey } = await generateKeyPair('ES256', { extractable: true })
    t = await buildTestApp({
      JWT_SECRET: '',
      JWT_PUBLIC_KEY: await exportSPKI(publicKey),
      JWT_PRIVATE_KEY: await exportPKCS8(privateKey),
    })
    tenant = await createTenant(t.app)
  })
  afterAll(() => t.close())

  it('verifies tokens signed with the private key and refuses HS256 ones', async () => {
    expect((await t.app.inject({ url: '/v1/e/changelog/posts', headers: tenant.headers })).statusCode).toBe(
      200,
    )
    const hs256 = await sign({ uid: USER, account_id: ACCOUNT }, nowSeconds() + 60)
    expect((await t.app.inject({ url: '/v1/e/changelog/posts', headers: bearer(hs256) })).statusCode).toBe(
      401,
    )
  })

  it('mints tokens through the admin API', async () => {
    const response = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/tokens',
      headers: adminHeaders,
      payload: { user_id: tenant.userId, account_id: tenant.accountId },
    })
    expect(response.statusCode).toBe(201)
  })
})

describe('account-status check', () => {
  const statuses: Record<string, string> = {
    '650000000000000000000011': 'active',
    '650000000000000000000012': 'suspended',
  }
  const tokens = createPlatformTokens({
    secret: TEST_JWT_SECRET,
    publicKey: undefined,
    privateKey: undefined,
  })
  const app = Fastify()
  beforeAll(async () => {
    registerErrorHandling(app)
    registerAuth(app, {
      tokens,
      verifyAccessToken: () => Promise.reject(new Error('no OAuth access tokens in this test')),
      limitOAuthApp: async () => {},
      adminToken: 'admin',
      redis: undefined,
      accountStatus: async (accountId) => statuses[accountId] ?? null,
      // The preHandler alone, without the check every call gets (account-access.test.ts).
      accountAccess: { admission: () => ({ refusal: undefined, requestBudget: null }) },
      budget: createAccountBudget({ requests: 1000, windowSeconds: 60, redis: undefined, logger: app.log }),
    })
    app.get('/guarded', { onRequest: app.authenticate, preHandler: app.requireActiveAccount }, async () => ({
      ok: 1,
    }))
    await app.ready()
  })
  afterAll(() => app.close())

  const call = async (accountId: string) => {
    const token = await tokens.sign({ uid: USER, account_id: accountId, parent_account: null }, 60)
    return app.inject({ url: '/guarded', headers: bearer(token) })
  }

  it('lets active accounts through', async () => {
    expect((await call('650000000000000000000011')).statusCode).toBe(200)
  })

  it('refuses suspended and unknown accounts with 403', async () => {
    const suspended = await call('650000000000000000000012')
    expect(suspended.statusCode).toBe(403)
    expect(suspended.json()).toEqual({ success: false, errno: 403, message: 'Account is suspended' })
    const unknown = await call('650000000000000000000013')
    expect(unknown.json()).toEqual({ success: false, errno: 403, message: 'Account not found' })
  })
})
