import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, vi } from 'vitest'
import {
  adminHeaders,
  anotherInstance,
  bearer,
  withTwoInstancesSharingRedis,
} from '../../../test/helpers/app.js'
import { createAccount } from '../../../test/helpers/fixtures.js'
import {
  createUser,
  obtainTokens,
  postAsClient,
  type RegisteredApp,
  registerApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * Access that ends when it should: removing a member (`DELETE /v1/admin/accounts/:id/users/:userId`) and
 * suspending an account cut the user's platform JWTs and their apps' tokens, however long those were
 * issued for: on this instance at once, on the others within OAUTH_REVOCATION_CACHE_MS, or at once with
 * Redis.
 */

const REVOCATION_CACHE_MS = 5_000
test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  OAUTH_REVOCATION_CACHE_MS: String(REVOCATION_CACHE_MS),
})

afterEach(() => {
  vi.useRealTimers()
})

type Headers = { authorization: string }

const contacts = (app: FastifyInstance, headers: Headers) => app.inject({ url: '/v1/contacts', headers })
const createContact = (app: FastifyInstance, headers: Headers) =>
  app.inject({
    method: 'POST',
    url: '/v1/contacts',
    headers,
    payload: { name: 'Lin', email: 'lin@x.example' },
  })
const removeMember = (app: FastifyInstance, accountId: string, userId: string) =>
  app.inject({
    method: 'DELETE',
    url: `/v1/admin/accounts/${accountId}/users/${userId}`,
    headers: adminHeaders,
  })
const setStatus = (app: FastifyInstance, accountId: string, status: 'active' | 'suspended') =>
  app.inject({
    method: 'PATCH',
    url: `/v1/admin/accounts/${accountId}`,
    headers: adminHeaders,
    payload: { status },
  })
const mintToken = (app: FastifyInstance, userId: string, accountId: string) =>
  app.inject({
    method: 'POST',
    url: '/v1/admin/tokens',
    headers: adminHeaders,
    payload: { user_id: userId, account_id: accountId },
  })
const addMembership = (app: FastifyInstance, userId: string, accountId: string) =>
  app.inject({
    method: 'POST',
    url: `/v1/admin/users/${userId}/memberships`,
    headers: adminHeaders,
    payload: { account_id: accountId },
  })
const refresh = (app: FastifyInstance, client: RegisteredApp, refreshToken: string) =>
  tokenRequest(app, { grant_type: 'refresh_token', refresh_token: refreshToken }, [
    client._id,
    client.client_secret,
  ])

/**
 * A user of a new account, signed in both ways: a platform JWT (`headers`) and an app's tokens (`app`, as
 * `client`).
 */
async function member(t: { app: FastifyInstance }) {
  const accountId = await createAccount(t.app, { name: 'Members' })
  const email = `member-${randomBytes(4).toString('hex')}@access.example`
  const user = await createUser(t.app, email, [accountId])
  const headers = bearer((await mintToken(t.app, user._id, accountId)).json().data.token as string)
  const client = await registerApp(t.app)
  const tokens = await obtainTokens(t.app, client, email)
  return {
    accountId,
    userId: user._id,
    email,
    headers,
    client,
    app: tokens,
    appHeaders: bearer(tokens.access_token),
  }
}

describe('removing a member (DELETE /v1/admin/accounts/:id/users/:userId)', () => {
  test("ends the user's access at once: their platform JWT, their apps' access and refresh tokens", async ({
    t,
  }) => {
    const m = await member(t)
    expect((await contacts(t.app, m.headers)).statusCode).toBe(200)
    expect((await contacts(t.app, m.appHeaders)).statusCode).toBe(200)

    const removed = await removeMember(t.app, m.accountId, m.userId)
    expect(removed.statusCode).toBe(200)
    expect(removed.json()).toMatchObject({
      success: true,
      data: { account_id: m.accountId, user_id: m.userId },
    })

    const refused = await contacts(t.app, m.headers)
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    expect(refused.json()).toEqual({
      success: false,
      errno: 401,
      message: 'Unauthorized',
      additional_info: 'user is no longer a member of the account',
    })
    expect((await createContact(t.app, m.headers)).statusCode).toBe(401)
    expect((await contacts(t.app, m.appHeaders)).statusCode).toBe(401)
    expect((await postAsClient(t.app, 'introspect', { token: m.app.access_token }, m.client)).json()).toEqual(
      {
        active: false,
      },
    )
    expect((await refresh(t.app, m.client, m.app.refresh_token)).json()).toMatchObject({
      error: 'invalid_grant',
    })
    const minted = await mintToken(t.app, m.userId, m.accountId)
    expect(minted.statusCode).toBe(404)
    expect(minted.json().message).toBe('User is not a member of this account')

    const audit = await t.app.inject({
      url: `/v1/admin/oauth/audit?account_id=${m.accountId}`,
      headers: adminHeaders,
    })
    expect(audit.json().data).toContainEqual(
      expect.objectContaining({
        event: 'grant.revoked',
        client_id: m.client._id,
        user_id: m.userId,
        detail: { reason: 'member_removed', grants: 1 },
      }),
    )
  })

  test("leaves the user's other accounts and the account's other members alone", async ({ t, owner }) => {
    const m = await member(t)
    expect((await addMembership(t.app, m.userId, owner.accountId)).statusCode).toBe(201)
    const elsewhere = bearer((await mintToken(t.app, m.userId, owner.accountId)).json().data.token as string)
    const colleague = await member(t)
    const colleagueThere = await createUser(t.app, `c-${randomBytes(4).toString('hex')}@access.example`, [
      m.accountId,
    ])
    const colleagueHeaders = bearer(
      (await mintToken(t.app, colleagueThere._id, m.accountId)).json().data.token as string,
    )

    expect((await removeMember(t.app, m.accountId, m.userId)).statusCode).toBe(200)
    expect((await contacts(t.app, elsewhere)).statusCode).toBe(200)
    expect((await contacts(t.app, colleagueHeaders)).statusCode).toBe(200)
    expect((await contacts(t.app, colleague.headers)).statusCode).toBe(200)
    expect((await contacts(t.app, colleague.appHeaders)).statusCode).toBe(200)
  })

  test('a member added back is let in at once with the same token; their apps must ask for consent again', async ({
    t,
  }) => {
    const m = await member(t)
    expect((await removeMember(t.app, m.accountId, m.userId)).statusCode).toBe(200)
    expect((await contacts(t.app, m.headers)).statusCode).toBe(401)

    expect((await addMembership(t.app, m.userId, m.accountId)).statusCode).toBe(201)
    expect((await contacts(t.app, m.headers)).statusCode).toBe(200)
    // The grants removal revoked stay revoked, and what the user had allowed is forgotten.
    expect((await contacts(t.app, m.appHeaders)).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/v1/auth/oauth/grants', headers: m.headers })).json().data).toEqual([])
  })

  test('answers 404 for an unknown account or user and for a user who is not a member, 400 for a malformed id', async ({
    t,
    owner,
    stranger,
  }) => {
    const unknown = '0123456789abcdef01234567'
    const answers = [
      [await removeMember(t.app, unknown, owner.userId), 404, 'Account not found'],
      [await removeMember(t.app, owner.accountId, unknown), 404, 'User not found'],
      [
        await removeMember(t.app, owner.accountId, stranger.userId),
        404,
        'User is not a member of this account',
      ],
    ] as const
    for (const [response, status, message] of answers) {
      expect(response.statusCode).toBe(status)
      expect(response.json()).toMatchObject({ success: false, errno: status, message })
    }
    expect((await removeMember(t.app, 'nope', owner.userId)).statusCode).toBe(400)
    const asTenant = await t.app.inject({
      method: 'DELETE',
      url: `/v1/admin/accounts/${owner.accountId}/users/${owner.userId}`,
      headers: owner.headers,
    })
    expect(asTenant.statusCode).toBe(401)
    // Nothing was removed by the refusals.
    expect((await contacts(t.app, owner.headers)).statusCode).toBe(200)
    expect((await contacts(t.app, stranger.headers)).statusCode).toBe(200)
  })
})

describe('suspending an account', () => {
  test("refuses its users' and apps' calls with 403 Account is suspended, reads included; reactivation restores them without new consent", async ({
    t,
    stranger,
  }) => {
    const m = await member(t)
    expect((await setStatus(t.app, m.accountId, 'suspended')).statusCode).toBe(200)
    const suspended = { success: false, errno: 403, message: 'Account is suspended' }
    for (const response of [
      await contacts(t.app, m.headers),
      await createContact(t.app, m.headers),
      await contacts(t.app, m.appHeaders),
    ]) {
      expect(response.statusCode).toBe(403)
      expect(response.json()).toEqual(suspended)
    }
    expect((await postAsClient(t.app, 'introspect', { token: m.app.access_token }, m.client)).json()).toEqual(
      {
        active: false,
      },
    )
    expect((await contacts(t.app, stranger.headers)).statusCode).toBe(200)

    expect((await setStatus(t.app, m.accountId, 'active')).statusCode).toBe(200)
    expect((await contacts(t.app, m.headers)).statusCode).toBe(200)
    expect((await contacts(t.app, m.appHeaders)).statusCode).toBe(200)
    expect((await createContact(t.app, m.headers)).statusCode).toBe(201)
  })
})

/**
 * Two members whose tokens `other` has let in (so it holds verdicts on them), then one removed and the
 * other's account suspended on `t`.
 */
async function removeAndSuspendAfterUseOn(t: { app: FastifyInstance }, other: FastifyInstance) {
  const removed = await member(t)
  const suspended = await member(t)
  for (const m of [removed, suspended]) {
    expect((await contacts(other, m.headers)).statusCode).toBe(200)
    expect((await contacts(other, m.appHeaders)).statusCode).toBe(200)
  }
  await removeMember(t.app, removed.accountId, removed.userId)
  await setStatus(t.app, suspended.accountId, 'suspended')
  return { removed, suspended }
}

/** The other instance refuses the removed member's tokens (401) and the suspended account's (403). */
async function expectRefusedOn(
  other: FastifyInstance,
  { removed, suspended }: Awaited<ReturnType<typeof removeAndSuspendAfterUseOn>>,
) {
  expect((await contacts(other, removed.headers)).statusCode).toBe(401)
  expect((await contacts(other, removed.appHeaders)).statusCode).toBe(401)
  expect((await contacts(other, suspended.headers)).statusCode).toBe(403)
  expect((await contacts(other, suspended.appHeaders)).statusCode).toBe(403)
}

/** The other instance's /token refuses their apps' refresh tokens, from the database, at once. */
async function expectRefreshRefusedOn(
  other: FastifyInstance,
  { removed, suspended }: Awaited<ReturnType<typeof removeAndSuspendAfterUseOn>>,
) {
  expect((await refresh(other, removed.client, removed.app.refresh_token)).json()).toMatchObject({
    error: 'invalid_grant',
  })
  expect((await refresh(other, suspended.client, suspended.app.refresh_token)).json()).toEqual({
    error: 'invalid_grant',
    error_description: 'Account is suspended',
  })
}

describe('on another instance', () => {
  test('a removal and a suspension are refused there within OAUTH_REVOCATION_CACHE_MS', async ({ t }) => {
    const other = await anotherInstance(t)
    try {
      const { removed, suspended } = await removeAndSuspendAfterUseOn(t, other)
      vi.useFakeTimers({ toFake: ['Date'] })
      vi.setSystemTime(Date.now() + REVOCATION_CACHE_MS + 1)
      await expectRefusedOn(other, { removed, suspended })
      await expectRefreshRefusedOn(other, { removed, suspended })
    } finally {
      await other.close()
    }
  })
})

describe.runIf(process.env.REDIS_URL)('on another instance sharing Redis', () => {
  test('a removal and a suspension are refused there at once, without its verdicts lapsing', async ({
    appEnv,
  }) => {
    await withTwoInstancesSharingRedis(appEnv, async (t, other) => {
      const { removed, suspended } = await removeAndSuspendAfterUseOn(t, other)
      // The clock stays: only the news through Redis can make the other instance refuse them.
      await vi.waitFor(() => expectRefusedOn(other, { removed, suspended }), {
        timeout: 2_000,
        interval: 20,
      })
      await expectRefreshRefusedOn(other, { removed, suspended })
      await setStatus(t.app, suspended.accountId, 'active')
      await vi.waitFor(async () => expect((await contacts(other, suspended.headers)).statusCode).toBe(200), {
        timeout: 2_000,
        interval: 20,
      })
    })
  })
})
