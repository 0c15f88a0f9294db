import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, vi } from 'vitest'
import {
  adminHeaders,
  anotherInstance,
  bearer,
  type TestApp,
  withTwoInstancesSharingRedis,
} from '../../../test/helpers/app.js'
import { createTenant } from '../../../test/helpers/fixtures.js'
import {
  createUser,
  flowOf,
  obtainCode,
  obtainTokens,
  postAsClient,
  type RegisteredApp,
  registerApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

/**
 * Section "Revoking access stops it": once a grant is revoked (the user takes the app's access back, the
 * app revokes its refresh token, a code is replayed), its access tokens are refused by the API and
 * introspect inactive, on this instance at once and on the others within OAUTH_REVOCATION_CACHE_MS.
 */

const EMAIL = 'revoking@grants.example'
const REVOCATION_CACHE_MS = 5_000

test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  OAUTH_REVOCATION_CACHE_MS: String(REVOCATION_CACHE_MS),
})

const contacts = (app: FastifyInstance, accessToken: string) =>
  app.inject({ url: '/v1/contacts', headers: bearer(accessToken) })

const introspect = (app: FastifyInstance, client: RegisteredApp, token: string) =>
  postAsClient(app, 'introspect', { token }, client)

/** The user EMAIL in the account, with a platform token to manage their grants. */
async function signedInUser(app: FastifyInstance, accountId: string) {
  const user = await createUser(app, EMAIL, [accountId])
  const response = await app.inject({
    method: 'POST',
    url: '/v1/admin/tokens',
    headers: adminHeaders,
    payload: { user_id: user._id, account_id: accountId },
  })
  return bearer(response.json().data.token as string)
}

const takeAccessBack = (app: FastifyInstance, headers: { authorization: string }, client: RegisteredApp) =>
  app.inject({ method: 'DELETE', url: `/v1/auth/oauth/grants/${client._id}`, headers })

afterEach(() => {
  vi.useRealTimers()
})

let userHeaders: { authorization: string }

test.beforeAll(async ({ t, owner }) => {
  userHeaders = await signedInUser(t.app, owner.accountId)
})

describe('revoked grants', () => {
  test('refuses the access tokens of an app whose access the user took back, and introspects them inactive', async ({
    t,
  }) => {
    const client = await registerApp(t.app)
    const { access_token } = await obtainTokens(t.app, client, EMAIL)
    expect((await contacts(t.app, access_token)).statusCode).toBe(200)
    expect((await introspect(t.app, client, access_token)).json()).toMatchObject({ active: true })

    expect((await takeAccessBack(t.app, userHeaders, client)).statusCode).toBe(200)
    const refused = await contacts(t.app, access_token)
    expect(refused.statusCode).toBe(401)
    expect(refused.json()).toMatchObject({ success: false, errno: 401 })
    expect((await introspect(t.app, client, access_token)).json()).toEqual({ active: false })
  })

  test('refuses the access tokens of a grant whose refresh token the app revoked (RFC 7009)', async ({
    t,
  }) => {
    const client = await registerApp(t.app)
    const kept = await obtainTokens(t.app, client, EMAIL)
    const { access_token, refresh_token } = await obtainTokens(t.app, client, EMAIL)
    expect((await contacts(t.app, access_token)).statusCode).toBe(200)

    expect((await postAsClient(t.app, 'revoke', { token: refresh_token }, client)).statusCode).toBe(200)
    expect((await contacts(t.app, access_token)).statusCode).toBe(401)
    expect((await introspect(t.app, client, access_token)).json()).toEqual({ active: false })
    // Only that grant: the app's other grant from the same user goes on.
    expect((await contacts(t.app, kept.access_token)).statusCode).toBe(200)
  })

  test('refuses the access token of a code exchanged twice (the replay revokes the grant)', async ({ t }) => {
    const client = await registerApp(t.app)
    const code = await obtainCode(t.app, client, EMAIL)
    const exchange = () =>
      tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0] as string },
        [client._id, client.client_secret],
      )
    const { access_token } = (await exchange()).json()
    expect((await contacts(t.app, access_token)).statusCode).toBe(200)
    expect((await exchange()).json()).toMatchObject({ error: 'invalid_grant' })
    expect((await contacts(t.app, access_token)).statusCode).toBe(401)
  })

  test('another instance on the database refuses the token within OAUTH_REVOCATION_CACHE_MS', async ({
    t,
  }) => {
    const other = await anotherInstance(t)
    try {
      await expectRefusedByTheOtherWithin(t, other, userHeaders, async () => {
        vi.useFakeTimers({ toFake: ['Date'] })
        vi.setSystemTime(Date.now() + REVOCATION_CACHE_MS + 1)
      })
    } finally {
      await other.close()
    }
  })
})

describe.runIf(process.env.REDIS_URL)('revoked grants, with Redis', () => {
  test('another instance sharing Redis refuses the token at once, without its cache lapsing', async ({
    appEnv,
  }) => {
    await withTwoInstancesSharingRedis(appEnv, async (t, other) => {
      const tenant = await createTenant(t.app)
      const headers = await signedInUser(t.app, tenant.accountId)
      // The clock stays: only the news through Redis can make the other instance refuse the token.
      await expectRefusedByTheOtherWithin(t, other, headers, (accessToken) =>
        vi.waitFor(async () => expect((await contacts(other, accessToken)).statusCode).toBe(401), {
          timeout: 2_000,
          interval: 20,
        }),
      )
    })
  })
})

/**
 * A token used on both instances, then the grant revoked on `t`: refused there at once, still served by
 * `other` from its cache until `wait` has passed, then refused by it and introspected inactive there.
 */
async function expectRefusedByTheOtherWithin(
  t: TestApp,
  other: FastifyInstance,
  headers: { authorization: string },
  wait: (accessToken: string) => Promise<unknown>,
) {
  const client = await registerApp(t.app)
  const { access_token } = await obtainTokens(t.app, client, EMAIL)
  expect((await contacts(other, access_token)).statusCode).toBe(200)
  expect((await takeAccessBack(t.app, headers, client)).statusCode).toBe(200)
  expect((await contacts(t.app, access_token)).statusCode).toBe(401)
  await wait(access_token)
  expect((await contacts(other, access_token)).statusCode).toBe(401)
  expect((await introspect(other, client, access_token)).json()).toEqual({ active: false })
}

describe('the revocation endpoint (RFC 7009)', () => {
  test.beforeAll(async ({ t, subAccount }) => {
    await createUser(t.app, 'solo@flow.example', [subAccount.accountId])
  })

  test('revokes a refresh token with its grant (RFC 7009), answering 200 for unknown tokens and unauthorized_client for another client’s', async ({
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
    const foreign = await revoke(tokens.refresh_token, other)
    expect(foreign.statusCode).toBe(400)
    expect(foreign.json()).toEqual({
      error: 'unauthorized_client',
      error_description: 'The token was not issued to this client',
    })
    const stillGood = await refresh(tokens.refresh_token)
    expect(stillGood.statusCode).toBe(200)

    expect((await revoke(stillGood.json().refresh_token)).statusCode).toBe(200)
    expect((await refresh(stillGood.json().refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    // The grace period of the first token ends with the revocation too.
    expect((await refresh(tokens.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })

    expect((await revoke('never-issued')).statusCode).toBe(200)
    expect((await revoke('')).json()).toMatchObject({ error: 'invalid_request' })
  })

  test('revokes an access token with its grant (RFC 7009 2.1), with or without token_type_hint, for the client it was issued to only', async ({
    t,
    oauthApp: client,
  }) => {
    const { authorize, exchange } = flowOf(t, client)
    const tokensOf = async () => (await exchange((await authorize('solo@flow.example')).code)).json()
    const revoke = (fields: Record<string, string>, as: RegisteredApp = client) =>
      postAsClient(t.app, 'revoke', fields, as)
    const refresh = (token: string) =>
      tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token }, [
        client._id,
        client.client_secret,
      ])
    const hinted = await tokensOf()
    const foreign = await revoke({ token: hinted.access_token }, await registerApp(t.app))
    expect(foreign.json()).toMatchObject({ error: 'unauthorized_client' })
    expect((await contacts(t.app, hinted.access_token)).statusCode).toBe(200)

    expect((await revoke({ token: hinted.access_token, token_type_hint: 'access_token' })).statusCode).toBe(
      200,
    )
    const refused = await contacts(t.app, hinted.access_token)
    expect(refused.statusCode).toBe(401)
    expect(refused.json()).toMatchObject({ additional_info: 'access token revoked' })
    expect((await introspect(t.app, client, hinted.access_token)).json()).toEqual({ active: false })
    // RFC 7009 2.1: the server "MAY revoke the respective refresh token as well": the grant goes.
    expect((await refresh(hinted.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    // Revoked already: invalid tokens are answered 200 (RFC 7009 2.2).
    expect((await revoke({ token: hinted.access_token })).statusCode).toBe(200)

    const unhinted = await tokensOf()
    expect((await revoke({ token: unhinted.access_token })).statusCode).toBe(200)
    expect((await contacts(t.app, unhinted.access_token)).statusCode).toBe(401)
  })
})

/**
 * A grant acts for a user in an account: a suspended account's grants wait, unchanged, for its
 * reactivation; a user's grant ends with their membership (RFC 6749 6).
 */
describe('grants of suspended accounts and of former members', () => {
  const setStatus = (app: FastifyInstance, accountId: string, status: 'active' | 'suspended') =>
    app.inject({
      method: 'PATCH',
      url: `/v1/admin/accounts/${accountId}`,
      headers: adminHeaders,
      payload: { status },
    })

  /** A user alone in a new account, with a code and tokens of `client` for it. */
  async function grantInNewAccount(t: TestApp, client: RegisteredApp) {
    const { accountId } = await createTenant(t.app)
    const email = `member-${randomBytes(4).toString('hex')}@grants.example`
    const user = await createUser(t.app, email, [accountId])
    const tokens = await obtainTokens(t.app, client, email)
    const code = await obtainCode(t.app, client, email)
    return { accountId, userId: user._id, tokens, code }
  }

  const callsOf = (t: TestApp, client: RegisteredApp) => ({
    refresh: (token: string) =>
      tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: token }, [
        client._id,
        client.client_secret,
      ]),
    exchange: (code: string) =>
      tokenRequest(
        t.app,
        { grant_type: 'authorization_code', code, redirect_uri: client.redirect_uris[0] as string },
        [client._id, client.client_secret],
      ),
  })

  test('refuses the refresh and the code exchange of a suspended account without using them up, and takes them after reactivation without new consent', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, exchange } = callsOf(t, client)
    const { accountId, tokens, code } = await grantInNewAccount(t, client)
    expect((await setStatus(t.app, accountId, 'suspended')).statusCode).toBe(200)
    const suspended = { error: 'invalid_grant', error_description: 'Account is suspended' }
    expect((await refresh(tokens.refresh_token)).json()).toEqual(suspended)
    expect((await exchange(code)).json()).toEqual(suspended)
    expect((await introspect(t.app, client, tokens.refresh_token)).json()).toEqual({ active: false })

    expect((await setStatus(t.app, accountId, 'active')).statusCode).toBe(200)
    expect((await introspect(t.app, client, tokens.refresh_token)).json()).toMatchObject({ active: true })
    expect((await refresh(tokens.refresh_token)).statusCode).toBe(200)
    expect((await exchange(code)).statusCode).toBe(200)
  })

  test('revokes an access token while its account is suspended (RFC 7009 2.1): after reactivation neither it nor its refresh token works', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh } = callsOf(t, client)
    const { accountId, tokens } = await grantInNewAccount(t, client)
    expect((await setStatus(t.app, accountId, 'suspended')).statusCode).toBe(200)
    const revoked = await postAsClient(t.app, 'revoke', { token: tokens.access_token }, client)
    expect(revoked.statusCode).toBe(200)

    expect((await setStatus(t.app, accountId, 'active')).statusCode).toBe(200)
    const refused = await contacts(t.app, tokens.access_token)
    expect(refused.json()).toMatchObject({ errno: 401, additional_info: 'access token revoked' })
    expect((await refresh(tokens.refresh_token)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The refresh token is unknown, revoked or expired',
    })
  })

  test('refuses the refresh and the code exchange of a removed account saying it is removed', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, exchange } = callsOf(t, client)
    const { accountId, tokens, code } = await grantInNewAccount(t, client)
    // As `DELETE /v1/admin/accounts/:id` leaves it until its job reaches the tokens' table.
    await t.app.platform.db.execute(sql`update accounts set status = 'removed' where id = ${accountId}`)
    const removed = { error: 'invalid_grant', error_description: 'Account is removed' }
    expect((await refresh(tokens.refresh_token)).json()).toEqual(removed)
    expect((await exchange(code)).json()).toEqual(removed)
  })

  test('refuses the refresh of a user no longer a member of the account and revokes the grant (RFC 6749 6); refuses their code too', async ({
    t,
    oauthApp: client,
  }) => {
    const { refresh, exchange } = callsOf(t, client)
    const { accountId, userId, tokens, code } = await grantInNewAccount(t, client)
    await t.app.platform.db.execute(
      sql`delete from memberships where account_id = ${accountId} and user_id = ${userId}`,
    )
    expect((await introspect(t.app, client, tokens.refresh_token)).json()).toEqual({ active: false })
    expect((await refresh(tokens.refresh_token)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The user is no longer a member of the account; the grant is revoked',
    })
    expect((await exchange(code)).json()).toEqual({
      error: 'invalid_grant',
      error_description: 'The user is no longer a member of the account',
    })
    expect((await contacts(t.app, tokens.access_token)).statusCode).toBe(401)

    // Revoked, not merely refused: a membership given back does not bring the grant back.
    await t.app.inject({
      method: 'POST',
      url: `/v1/admin/users/${userId}/memberships`,
      headers: adminHeaders,
      payload: { account_id: accountId },
    })
    expect((await refresh(tokens.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
  })
})
