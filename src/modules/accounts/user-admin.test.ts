import type { FastifyInstance } from 'fastify'
import { SignJWT } from 'jose'
import { afterEach, describe, expect, vi } from 'vitest'
import {
  adminHeaders,
  anotherInstance,
  bearer,
  TEST_JWT_SECRET,
  type TestApp,
  withTwoInstancesSharingRedis,
} from '../../../test/helpers/app.js'
import { addUser, createAccount } from '../../../test/helpers/fixtures.js'
import { untilWaitingOnALock } from '../../../test/helpers/locks.js'
import {
  browser,
  createUser,
  obtainTokens,
  PASSWORD,
  type RegisteredApp,
  tokenRequest,
} from '../../../test/helpers/oauth.js'
import { realtimeClients } from '../../../test/helpers/realtime.js'
import { createGroup, postMessage, roomCall } from '../../../test/helpers/rooms.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { SESSIONS_ENDED } from '../../platform/auth/account-access.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { deleteMembershipsOfUser, eraseUser, lockUser } from './user-admin.repository.js'

const UNKNOWN_ID = '650000000000000000000009'

afterEach(() => {
  vi.useRealTimers()
})

const admin = (t: TestApp, method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
  t.app.inject({ method, url: `/v1/admin${url}`, headers: adminHeaders, payload })

/** The sign-in page's answer to `email` and `password`: 401 for a wrong pair, a consent page or redirect else. */
async function signIn(t: TestApp, client: RegisteredApp, email: string, password: string) {
  const b = browser(t.app)
  const page = await b.openFor(client)
  return (await b.post('', { token: page.token, email, password })).status
}

/** Every object in `body`, at any depth, whose `conversation_id` is `id` and that shows a `user`. */
function membersNamed(body: unknown, id: string): unknown[] {
  if (Array.isArray(body)) return body.flatMap((item) => membersNamed(item, id))
  if (typeof body !== 'object' || body === null) return []
  const here = (body as { conversation_id?: unknown }).conversation_id === id && 'user' in body ? [body] : []
  return [...here, ...Object.values(body).flatMap((value) => membersNamed(value, id))]
}

const refresh = (t: TestApp, client: RegisteredApp, refreshToken: string) =>
  tokenRequest(t.app, { grant_type: 'refresh_token', refresh_token: refreshToken }, [
    client._id,
    client.client_secret,
  ])

type Headers = { authorization: string }

const contacts = (app: FastifyInstance, headers: Headers) => app.inject({ url: '/v1/contacts', headers })

/** A platform JWT for the member from the admin API, issued now (this instance's clock). */
async function mint(t: TestApp, userId: string, accountId: string): Promise<Headers> {
  const minted = await admin(t, 'POST', '/tokens', { user_id: userId, account_id: accountId })
  return bearer(minted.json().data.token)
}

const SESSIONS_ENDED_ANSWER = {
  success: false,
  errno: 401,
  message: 'Unauthorized',
  additional_info: SESSIONS_ENDED,
}

/** Stops the clock 0.1 s into a second to come, so that what happens next shares one second of `iat`. */
function stopClockInASecond() {
  vi.useFakeTimers({ toFake: ['Date'] })
  vi.setSystemTime(Math.ceil(Date.now() / 1000) * 1000 + 100)
}

const nextSecond = () => vi.setSystemTime(Date.now() + 1000)

const connectTo = realtimeClients()

/** `DELETE /v1/admin/users/:id`: the operator removes a user. */
describe('user removal', () => {
  test("ends every membership, refuses the user's tokens, erases the person and frees the email", async ({
    t,
    oauthApp: client,
  }) => {
    const accountId = await createAccount(t.app, { name: 'Leaving Co' })
    const otherAccountId = await createAccount(t.app, { name: 'Side Gig' })
    const email = 'leaving@removal.example'
    const { _id: userId } = await createUser(t.app, email, [accountId])
    const minted = await admin(t, 'POST', '/tokens', { user_id: userId, account_id: accountId })
    const platformJwt = bearer(minted.json().data.token)
    const app = await obtainTokens(t.app, client, email)
    await admin(t, 'POST', `/users/${userId}/memberships`, { account_id: otherAccountId })
    expect((await t.app.inject({ url: '/v1/contacts', headers: platformJwt })).statusCode).toBe(200)
    expect((await t.app.inject({ url: '/v1/contacts', headers: bearer(app.access_token) })).statusCode).toBe(
      200,
    )

    const removed = await admin(t, 'DELETE', `/users/${userId}`)
    expect(removed.statusCode).toBe(200)
    expect(removed.json().data).toEqual({
      _id: userId,
      removed_at: expect.any(String),
      account_ids: [accountId, otherAccountId].sort(),
    })

    // Every token naming the user is refused: the platform's, the app's, and the app's refresh token.
    expect((await t.app.inject({ url: '/v1/contacts', headers: platformJwt })).statusCode).toBe(401)
    expect((await t.app.inject({ url: '/v1/contacts', headers: bearer(app.access_token) })).statusCode).toBe(
      401,
    )
    expect((await refresh(t, client, app.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    expect(await signIn(t, client, email, PASSWORD)).toBe(401)
    // No token can be minted for the user again, nor a membership given back.
    expect((await admin(t, 'POST', '/tokens', { user_id: userId, account_id: accountId })).statusCode).toBe(
      404,
    )
    const back = await admin(t, 'POST', `/users/${userId}/memberships`, { account_id: accountId })
    expect(back.json()).toMatchObject({ errno: 404, message: 'User not found' })

    // The user is no more: not read, not listed, not found by email, not removed twice.
    expect((await admin(t, 'GET', `/users/${userId}`)).json()).toMatchObject({ errno: 404 })
    expect((await admin(t, 'GET', `/users?email=${email}`)).json().data).toEqual([])
    const findUsers = await t.app.inject({
      url: `/v1/auth/oauth/findUsers?email=${userId.slice(0, 8)}`,
      headers: adminHeaders,
    })
    expect(findUsers.json().data).toEqual([])
    const again = await admin(t, 'DELETE', `/users/${userId}`)
    expect(again.statusCode).toBe(404)
    expect(again.json()).toEqual({ success: false, errno: 404, message: 'User not found' })
    // The address is free for a new user.
    const newcomer = await admin(t, 'POST', '/users', { email, password: 'another password', name: 'New' })
    expect(newcomer.statusCode).toBe(201)
  })

  test("keeps what the user wrote in the account's rooms, read by the others as before", async ({ t }) => {
    const accountId = await createAccount(t.app, { name: 'Team' })
    const stays = await addUser(t.app, accountId, 'Stays')
    const leaves = await addUser(t.app, accountId, 'Leaves')
    const room = await createGroup(t.app, stays, [leaves])
    await postMessage(t.app, leaves, room._id, 'handing over the keys')

    expect((await admin(t, 'DELETE', `/users/${leaves.userId}`)).statusCode).toBe(200)
    const messages = await roomCall(t.app, stays, 'GET', `/${room._id}/messages`)
    expect(messages.statusCode).toBe(200)
    expect(messages.body).toContain('handing over the keys')
    // The room list names the former member by their chat identity, with nothing left of the person.
    const roomList = await roomCall(t.app, stays, 'GET', '/')
    expect(roomList.statusCode).toBe(200)
    expect(membersNamed(roomList.json(), leaves.conversationId)).toEqual([
      expect.objectContaining({ user: { name: '', email: '', avatar: '' } }),
    ])
    expect((await roomCall(t.app, leaves, 'GET', '/')).statusCode).toBe(401)
  })

  // Two connections are needed: the removal holds the user's row while the membership is asked for.
  test.runIf(process.env.DATABASE_URL)(
    'gives no membership back to a user whose removal commits while it is being added',
    async ({ t }) => {
      const accountId = await createAccount(t.app, { name: 'Racing' })
      const { userId } = await addUser(t.app, await createAccount(t.app))
      let added: ReturnType<typeof admin> | undefined
      await inTransaction(t.app.platform.db, async (tx) => {
        expect(await lockUser(tx, userId)).toBe(true)
        added = admin(t, 'POST', `/users/${userId}/memberships`, { account_id: accountId })
        await untilWaitingOnALock(t.app)
        await deleteMembershipsOfUser(tx, userId)
        await eraseUser(tx, userId)
      })
      expect((await (added as ReturnType<typeof admin>)).json()).toMatchObject({
        errno: 404,
        message: 'User not found',
      })
    },
  )

  test('answers 404 for an unknown user, 400 naming a bad id, 401 without the admin token', async ({ t }) => {
    expect((await admin(t, 'DELETE', `/users/${UNKNOWN_ID}`)).json()).toEqual({
      success: false,
      errno: 404,
      message: 'User not found',
    })
    expect((await admin(t, 'DELETE', '/users/nope')).json()).toMatchObject({
      errno: 400,
      message: 'id must be a 24-character hex id',
    })
    expect((await t.app.inject({ method: 'DELETE', url: `/v1/admin/users/${UNKNOWN_ID}` })).statusCode).toBe(
      401,
    )
  })
})

/** `POST /v1/admin/users/:id/password`: the operator resets a user's password. */
describe('password reset', () => {
  test("sets the password given: the old one fails, the new one works, the user's app grants end", async ({
    t,
    oauthApp: client,
  }) => {
    const accountId = await createAccount(t.app, { name: 'Reset Co' })
    const email = 'forgetful@reset.example'
    const { _id: userId } = await createUser(t.app, email, [accountId])
    const app = await obtainTokens(t.app, client, email)
    const minted = await admin(t, 'POST', '/tokens', { user_id: userId, account_id: accountId })

    const reset = await admin(t, 'POST', `/users/${userId}/password`, { password: 'a brand new secret' })
    expect(reset.statusCode).toBe(200)
    expect(reset.json().data).toEqual({ _id: userId, password: null })
    expect(await signIn(t, client, email, PASSWORD)).toBe(401)
    expect(await signIn(t, client, email, 'a brand new secret')).toBe(200)
    // The app's grant was made with the old password: its refresh token is revoked.
    expect((await refresh(t, client, app.refresh_token)).json()).toMatchObject({ error: 'invalid_grant' })
    const audit = (await admin(t, 'GET', `/oauth/audit?account_id=${accountId}`)).json().data
    expect(audit[0]).toMatchObject({
      event: 'grant.revoked',
      user_id: userId,
      detail: { reason: 'password_reset' },
    })
    // The user's session ends too: the platform JWT issued before the reset is refused.
    const platformJwt = bearer(minted.json().data.token)
    expect((await contacts(t.app, platformJwt)).json()).toEqual(SESSIONS_ENDED_ANSWER)
  })

  test('generates a password when none is given and answers it this once', async ({
    t,
    oauthApp: client,
  }) => {
    const accountId = await createAccount(t.app)
    const email = 'generated@reset.example'
    const { _id: userId } = await createUser(t.app, email, [accountId])
    const reset = await admin(t, 'POST', `/users/${userId}/password`, {})
    const { password } = reset.json().data
    expect(password).toMatch(/^[\w-]{24}$/)
    expect(await signIn(t, client, email, password)).toBe(200)
    expect(await signIn(t, client, email, PASSWORD)).toBe(401)
    const user = (await admin(t, 'GET', `/users/${userId}`)).json()
    expect(JSON.stringify(user)).not.toContain(password)
  })

  test('answers 400 naming a short password, 404 for an unknown or removed user', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const { userId } = await addUser(t.app, accountId)
    const short = await admin(t, 'POST', `/users/${userId}/password`, { password: 'short' })
    expect(short.statusCode).toBe(400)
    expect(short.json().message).toMatch(/^password /)
    expect((await admin(t, 'POST', `/users/${UNKNOWN_ID}/password`, {})).statusCode).toBe(404)
    await admin(t, 'DELETE', `/users/${userId}`)
    expect((await admin(t, 'POST', `/users/${userId}/password`, {})).json()).toMatchObject({
      errno: 404,
      message: 'User not found',
    })
  })
})

/**
 * A reset ends the user's sessions: platform JWTs issued before it are refused (401) in every account, on
 * every instance (at once with Redis, else within OAUTH_REVOCATION_CACHE_MS); tokens issued after it work.
 */
describe("password reset ends the user's sessions", () => {
  test('refuses tokens issued before it or in its second, in every account; lets in those issued after', async ({
    t,
  }) => {
    const accountId = await createAccount(t.app, { name: 'Main' })
    const otherAccountId = await createAccount(t.app, { name: 'Side' })
    const { _id: userId } = await createUser(t.app, 'stolen@sessions.example', [accountId, otherAccountId])
    const peer = await addUser(t.app, accountId, 'Peer')
    stopClockInASecond()
    const before = await mint(t, userId, accountId)
    const beforeElsewhere = await mint(t, userId, otherAccountId)
    expect((await contacts(t.app, before)).statusCode).toBe(200)
    expect((await contacts(t.app, beforeElsewhere)).statusCode).toBe(200)

    expect((await admin(t, 'POST', `/users/${userId}/password`, {})).statusCode).toBe(200)
    const sameSecond = await mint(t, userId, accountId)
    for (const headers of [before, beforeElsewhere, sameSecond]) {
      const refused = await contacts(t.app, headers)
      expect(refused.json()).toEqual(SESSIONS_ENDED_ANSWER)
      expect(refused.headers['www-authenticate']).toBe('Bearer error="invalid_token"')
    }
    // Another member's session is not the user's: it stands.
    expect((await contacts(t.app, peer.headers)).statusCode).toBe(200)

    nextSecond()
    const after = await mint(t, userId, accountId)
    expect((await contacts(t.app, after)).statusCode).toBe(200)
    expect((await contacts(t.app, await mint(t, userId, otherAccountId))).statusCode).toBe(200)
    expect((await contacts(t.app, before)).json()).toEqual(SESSIONS_ENDED_ANSWER)
  })

  test('refuses a platform JWT without iat once the sessions were reset, not before', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const { _id: userId } = await createUser(t.app, 'timeless@sessions.example', [accountId])
    const token = await new SignJWT({ uid: userId, account_id: accountId, parent_account: null })
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode(TEST_JWT_SECRET))
    expect((await contacts(t.app, bearer(token))).statusCode).toBe(200)
    expect((await admin(t, 'POST', `/users/${userId}/password`, {})).statusCode).toBe(200)
    expect((await contacts(t.app, bearer(token))).json()).toEqual(SESSIONS_ENDED_ANSWER)
  })

  test("lets in the tokens of an app the user allows after it (an app's token answers to its grant)", async ({
    t,
    oauthApp: client,
  }) => {
    const accountId = await createAccount(t.app)
    const email = 'returning@sessions.example'
    const { _id: userId } = await createUser(t.app, email, [accountId])
    const reset = await admin(t, 'POST', `/users/${userId}/password`, { password: PASSWORD })
    expect(reset.statusCode).toBe(200)
    const app = await obtainTokens(t.app, client, email)
    expect((await contacts(t.app, bearer(app.access_token))).statusCode).toBe(200)
  })

  test("disconnects the user's sockets and refuses a connection with a token issued before", async ({
    t,
  }) => {
    const accountId = await createAccount(t.app)
    const [user, peer] = [await addUser(t.app, accountId, 'Online'), await addUser(t.app, accountId, 'Peer')]
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const [asUser, asPeer] = await Promise.all([
      connectTo(url, { token: user.token }),
      connectTo(url, { token: peer.token }),
    ])
    expect((await admin(t, 'POST', `/users/${user.userId}/password`, {})).statusCode).toBe(200)
    await vi.waitFor(() => expect(asUser.socket.connected).toBe(false), { timeout: 2_000, interval: 20 })
    expect(asPeer.socket.connected).toBe(true)
    const refused = await connectTo(url, { token: user.token }).then(
      () => expect.fail('the connection was accepted'),
      (error: Error & { data?: { reason?: string } }) => error.data?.reason,
    )
    expect(refused).toBe(SESSIONS_ENDED)
  })

  test('is heard on another instance within OAUTH_REVOCATION_CACHE_MS', async ({ t }) => {
    const accountId = await createAccount(t.app)
    const { _id: userId } = await createUser(t.app, 'elsewhere@sessions.example', [accountId])
    const other = await anotherInstance(t)
    try {
      const before = await mint(t, userId, accountId)
      expect((await contacts(other, before)).statusCode).toBe(200)
      expect((await admin(t, 'POST', `/users/${userId}/password`, {})).statusCode).toBe(200)
      vi.useFakeTimers({ toFake: ['Date'] })
      vi.setSystemTime(Date.now() + t.config.oauth.revocationCacheMs + 1)
      expect((await contacts(other, before)).json()).toEqual(SESSIONS_ENDED_ANSWER)
      expect((await contacts(other, await mint(t, userId, accountId))).statusCode).toBe(200)
    } finally {
      await other.close()
    }
  })
})

describe.runIf(process.env.REDIS_URL)("password reset ends the user's sessions, sharing Redis", () => {
  test('is heard on another instance at once, without its verdicts lapsing', async ({ appEnv }) => {
    await withTwoInstancesSharingRedis(appEnv, async (t, other) => {
      const accountId = await createAccount(t.app)
      const { _id: userId } = await createUser(t.app, 'at-once@sessions.example', [accountId])
      const before = await mint(t, userId, accountId)
      expect((await contacts(other, before)).statusCode).toBe(200)
      expect((await admin(t, 'POST', `/users/${userId}/password`, {})).statusCode).toBe(200)
      // The clock stays: only the news through Redis can make the other instance refuse the token.
      await vi.waitFor(
        async () => expect((await contacts(other, before)).json()).toEqual(SESSIONS_ENDED_ANSWER),
        {
          timeout: 2_000,
          interval: 20,
        },
      )
      stopClockInASecond()
      nextSecond()
      expect((await contacts(other, await mint(t, userId, accountId))).statusCode).toBe(200)
    })
  })
})
