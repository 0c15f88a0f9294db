import type { FastifyInstance } from 'fastify'
import { afterEach, beforeEach, describe, expect, vi } from 'vitest'
import { adminHeaders, buildTestApp, withTwoInstancesSharingRedis } from '../../../test/helpers/app.js'
import { createAccount, createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { createUser, obtainTokens, registerApp } from '../../../test/helpers/oauth.js'
import { startPrivateRedis } from '../../../test/helpers/private-services.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * A budget per account on the API: every request authenticated as an account counts against the
 * account's budget across instances; past it 429 in the envelope with Retry-After; every counted response
 * carries RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers-11); the admin API sets an
 * account's own budget.
 */

const WINDOW_MS = 60_000
const DEFAULT_BUDGET = 6000

// The service's default budget (the test helpers give other tests a larger one).
test.override('appEnv', {
  ACCOUNT_REQUEST_BUDGET: String(DEFAULT_BUDGET),
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
})

// The clock stands 1 s into a budget window, so that no test's requests straddle two windows: each answer's
// `t` is the 59 s left of it.
beforeEach(() => {
  const now = Date.now()
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Math.floor(now / WINDOW_MS) * WINDOW_MS + 1000)
})
afterEach(() => {
  vi.useRealTimers()
})

const BUDGET_URL = (accountId: string) => `/v1/admin/accounts/${accountId}/request-budget`

const setBudget = (app: FastifyInstance, accountId: string, requests: unknown) =>
  app.inject({ method: 'PUT', url: BUDGET_URL(accountId), headers: adminHeaders, payload: { requests } })

/** The light authenticated GET. */
const call = (app: FastifyInstance, tenant: Pick<Tenant, 'headers'>) =>
  app.inject({ url: '/v1/e/changelog/posts', headers: tenant.headers })

const statusesOf = async (calls: (() => Promise<{ statusCode: number }>)[]) => {
  const statuses: number[] = []
  for (const next of calls) statuses.push((await next()).statusCode)
  return statuses
}

describe('the request budget of an account', () => {
  test('tells every answer the policy and what is left of it (RateLimit-Policy, RateLimit)', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const first = await call(t.app, tenant)
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-policy']).toBe(`"account";q=${DEFAULT_BUDGET};w=60`)
    expect(first.headers.ratelimit).toBe(`"account";r=${DEFAULT_BUDGET - 1};t=59`)
    expect((await call(t.app, tenant)).headers.ratelimit).toBe(`"account";r=${DEFAULT_BUDGET - 2};t=59`)
    // A refusal after authentication counts too, and says so.
    const missing = await t.app.inject({
      url: '/v1/contacts/0123456789abcdef01234567',
      headers: tenant.headers,
    })
    expect(missing.statusCode).toBe(404)
    expect(missing.headers.ratelimit).toBe(`"account";r=${DEFAULT_BUDGET - 3};t=59`)
    // A request that is not the account's (the admin API, a public route) carries neither.
    const admin = await t.app.inject({ url: BUDGET_URL(tenant.accountId), headers: adminHeaders })
    expect(admin.headers['ratelimit-policy']).toBeUndefined()
    expect(admin.headers.ratelimit).toBeUndefined()
  })

  test('answers 429 in the error envelope with Retry-After once the account has spent its budget', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    expect((await setBudget(t.app, tenant.accountId, 3)).json()).toStrictEqual({
      success: true,
      message: 'SUCCESS',
      data: { account_id: tenant.accountId, requests: 3, effective_requests: 3, window_seconds: 60 },
    })
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await call(t.app, tenant))
    expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 200, 429])
    expect(answers.map((answer) => answer.headers.ratelimit)).toEqual([
      '"account";r=2;t=59',
      '"account";r=1;t=59',
      '"account";r=0;t=59',
      '"account";r=0;t=59',
    ])
    const refused = answers[3] as (typeof answers)[number]
    // In the error envelope of the route's area: the changelog's `status`, the service's `success`.
    expect(refused.json()).toStrictEqual({
      status: false,
      errno: 429,
      message: 'Too many requests',
      additional_info: { retry_after: 59 },
    })
    expect(refused.headers['retry-after']).toBe('59')
    expect(refused.headers['ratelimit-policy']).toBe('"account";q=3;w=60')
    const contacts = await t.app.inject({ url: '/v1/contacts', headers: tenant.headers })
    expect(contacts.statusCode).toBe(429)
    expect(contacts.json()).toStrictEqual({
      success: false,
      errno: 429,
      message: 'Too many requests',
      additional_info: { retry_after: 59 },
    })
    expect(contacts.headers['retry-after']).toBe('59')
    // Every user of the account shares it.
    const colleague = await createTenant(t.app)
    await setBudget(t.app, colleague.accountId, 1)
    expect((await call(t.app, colleague)).statusCode).toBe(200)
    expect((await call(t.app, colleague)).statusCode).toBe(429)
    // The next window gives the account its budget again.
    vi.setSystemTime(Date.now() + WINDOW_MS)
    const next = await call(t.app, tenant)
    expect(next.statusCode).toBe(200)
    expect(next.headers.ratelimit).toBe('"account";r=2;t=59')
  })

  test('counts the requests of apps (OAuth access tokens) and of users alike', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const email = `budget-${accountId}@example.com`
    const user = await createUser(t.app, email, [accountId])
    const client = await registerApp(t.app, { scopes: ['crm.contacts.read'] })
    const { access_token } = await obtainTokens(t.app, client, email)
    const token = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/tokens',
      headers: adminHeaders,
      payload: { user_id: user._id, account_id: accountId },
    })
    const userHeaders = { authorization: `Bearer ${token.json().data.token}` }
    await setBudget(t.app, accountId, 2)
    const byApp = () =>
      t.app.inject({ url: '/v1/contacts', headers: { authorization: `Bearer ${access_token}` } })
    const app = await byApp()
    expect(app.statusCode).toBe(200)
    expect(app.headers.ratelimit).toBe('"account";r=1;t=59')
    expect((await call(t.app, { headers: userHeaders })).statusCode).toBe(200)
    expect((await byApp()).statusCode).toBe(429)
    expect((await call(t.app, { headers: userHeaders })).statusCode).toBe(429)
  })

  test("one account past its budget leaves the others' alone", async ({ t }) => {
    const noisy = await createTenant(t.app)
    const quiet = await createTenant(t.app)
    await setBudget(t.app, noisy.accountId, 1)
    expect(await statusesOf([() => call(t.app, noisy), () => call(t.app, noisy)])).toEqual([200, 429])
    const answer = await call(t.app, quiet)
    expect(answer.statusCode).toBe(200)
    expect(answer.headers.ratelimit).toBe(`"account";r=${DEFAULT_BUDGET - 1};t=59`)
  })

  test('a change takes effect at the next request: raised, lowered, or back to the default', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    expect((await call(t.app, tenant)).statusCode).toBe(200)
    await setBudget(t.app, tenant.accountId, 1)
    expect((await call(t.app, tenant)).statusCode).toBe(429)
    await setBudget(t.app, tenant.accountId, 3)
    expect(await statusesOf([() => call(t.app, tenant), () => call(t.app, tenant)])).toEqual([200, 200])
    expect((await call(t.app, tenant)).statusCode).toBe(429)
    const cleared = await setBudget(t.app, tenant.accountId, null)
    expect(cleared.json().data).toEqual({
      account_id: tenant.accountId,
      requests: null,
      effective_requests: DEFAULT_BUDGET,
      window_seconds: 60,
    })
    const answer = await call(t.app, tenant)
    expect(answer.statusCode).toBe(200)
    expect(answer.headers['ratelimit-policy']).toBe(`"account";q=${DEFAULT_BUDGET};w=60`)
    expect(answer.headers.ratelimit).toBe(`"account";r=${DEFAULT_BUDGET - 4};t=59`)
  })
})

describe('the request budget in the OpenAPI document', () => {
  test("documents a 429 on every route that authenticates an account, and the budget's fields", async ({
    t,
  }) => {
    const document = (await t.app.inject({ url: '/docs/json' })).json()
    expect(Object.keys(document.paths['/v1/e/changelog/posts'].get.responses)).toContain('429')
    expect(Object.keys(document.paths['/v1/contacts/{id}'].get.responses)).toContain('429')
    expect(document.components.securitySchemes.bearer.description).toContain('RateLimit-Policy')
    expect(document.components.securitySchemes.oauth2.description).toContain('RateLimit-Policy')
    const put = document.paths['/v1/admin/accounts/{id}/request-budget'].put
    expect(Object.keys(put.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '404', '409']))
    expect(Object.keys(put.responses)).not.toContain('429')
  })
})

describe('PUT and GET /v1/admin/accounts/:id/request-budget', () => {
  test('reads the budget: the default until the account has its own', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const read = () => t.app.inject({ url: BUDGET_URL(accountId), headers: adminHeaders })
    expect((await read()).json().data).toEqual({
      account_id: accountId,
      requests: null,
      effective_requests: DEFAULT_BUDGET,
      window_seconds: 60,
    })
    await setBudget(t.app, accountId, 250_000)
    expect((await read()).json().data).toMatchObject({ requests: 250_000, effective_requests: 250_000 })
  })

  test.for([
    [0, 'requests'],
    [-5, 'requests'],
    [1.5, 'requests'],
    ['many', 'requests'],
    [1_000_000_001, 'requests'],
  ] as const)('refuses requests=%j with a 400 naming the field', async ([requests, field], { t }) => {
    const accountId = await createAccount(t.app)
    const answer = await setBudget(t.app, accountId, requests)
    expect(answer.statusCode).toBe(400)
    expect(answer.json()).toMatchObject({ success: false, errno: 400 })
    expect(answer.json().message).toContain(field)
  })

  test('refuses a body without requests, an unknown account, a bad id and a missing admin token', async ({
    t,
  }) => {
    const accountId = await createAccount(t.app)
    const missing = await t.app.inject({
      method: 'PUT',
      url: BUDGET_URL(accountId),
      headers: adminHeaders,
      payload: {},
    })
    expect(missing.statusCode).toBe(400)
    expect(missing.json().message).toContain('requests')
    expect((await setBudget(t.app, '0123456789abcdef01234567', 10)).statusCode).toBe(404)
    const badId = await setBudget(t.app, 'nope', 10)
    expect(badId.statusCode).toBe(400)
    expect(badId.json().message).toContain('id')
    // A removed account can no longer be changed.
    const removed = await createAccount(t.app)
    const removal = await t.app.inject({
      method: 'DELETE',
      url: `/v1/admin/accounts/${removed}`,
      headers: adminHeaders,
    })
    expect(removal.statusCode).toBe(202)
    expect((await setBudget(t.app, removed, 10)).statusCode).toBe(409)
    const anonymous = await t.app.inject({
      method: 'PUT',
      url: BUDGET_URL(accountId),
      payload: { requests: 9 },
    })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe.runIf(process.env.REDIS_URL)('the request budget across instances (Redis)', () => {
  test('holds one budget for an account across instances, and a change made on one holds on the other', async () => {
    await withTwoInstancesSharingRedis(
      { ACCOUNT_REQUEST_BUDGET: String(DEFAULT_BUDGET) },
      async (t, other) => {
        const tenant = await createTenant(t.app)
        await setBudget(t.app, tenant.accountId, 4)
        const calls = Array.from({ length: 8 }, (_, i) => () => call(i % 2 ? other : t.app, tenant))
        expect(await statusesOf(calls)).toEqual([200, 200, 200, 200, 429, 429, 429, 429])

        // The other instance has this account's verdict (the default budget) when the change is made here.
        const changing = await createTenant(t.app)
        const before = await call(other, changing)
        expect(before.headers['ratelimit-policy']).toBe(`"account";q=${DEFAULT_BUDGET};w=60`)
        const heard = new Promise<void>((resolve) =>
          other.platform.accountAccess.onChange((accountId) => {
            if (accountId === changing.accountId) resolve()
          }),
        )
        await setBudget(t.app, changing.accountId, 3)
        await heard
        // One of the three is spent: two more, whichever instance answers them.
        const after = await statusesOf(
          Array.from({ length: 4 }, (_, i) => () => call(i % 2 ? t.app : other, changing)),
        )
        expect(after.filter((status) => status === 200)).toHaveLength(2)
        expect(after.filter((status) => status === 429)).toHaveLength(2)
        expect((await call(other, changing)).headers['ratelimit-policy']).toBe('"account";q=3;w=60')
      },
    )
  })

  test('counts on each instance alone while Redis is down, and answers meanwhile', async () => {
    const redis = await startPrivateRedis()
    const t = await buildTestApp({ REDIS_URL: redis.url, ACCOUNT_REQUEST_BUDGET: String(DEFAULT_BUDGET) })
    try {
      const tenant = await createTenant(t.app)
      await setBudget(t.app, tenant.accountId, 2)
      await redis.stop()
      expect(
        await statusesOf([() => call(t.app, tenant), () => call(t.app, tenant), () => call(t.app, tenant)]),
      ).toEqual([200, 200, 429])
    } finally {
      await t.close()
      await redis.stop()
    }
  })
})
