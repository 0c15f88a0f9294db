import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { SignJWT } from 'jose'
import pino from 'pino'
import { afterEach, describe, expect, it, onTestFinished, vi } from 'vitest'
import { adminHeaders, anotherInstance, captureLogs, TEST_JWT_SECRET } from '../../../test/helpers/app.js'
import { addUser, createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { type RealtimeClient, realtimeClients } from '../../../test/helpers/realtime.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { CLOCK_SKEW_SECONDS, type PlatformTokens } from '../auth/platform-jwt.js'
import { Forbidden } from '../http/errors.js'
import {
  type ChatCaller,
  CLIENT_EVENT_LIMIT,
  CLIENT_EVENT_WINDOW_MS,
  type ClientEventAnswer,
  createRealtimeGateway,
} from './gateway.js'

const redisUrl = process.env.REDIS_URL
// With REDIS_URL set, every test here delivers through the Redis adapter.
test.override('appEnv', redisUrl ? { REDIS_URL: redisUrl } : {})

let url: string
test.beforeAll(async ({ t }) => {
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
})

type Client = RealtimeClient
const connectTo = realtimeClients()
afterEach(() => {
  vi.useRealTimers()
})

/** A connection to `at` with this handshake `auth`; resolves once connected. */
const connect = (auth: Record<string, unknown>, at = url) => connectTo(at, auth)

/** The reason the server gives for refusing a connection with this `auth`. */
async function refusal(auth: Record<string, unknown>): Promise<unknown> {
  const error = await connect(auth).then(
    () => expect.fail('the connection was accepted'),
    (error: Error & { data?: { reason?: string } }) => error,
  )
  expect(error.message).toBe('Unauthorized')
  return error.data?.reason
}

/**
 * Sends a last event to every client and waits until each has it: events to one socket keep their
 * order, so whatever an earlier call would have delivered has arrived by then.
 */
async function settle(
  raise: (ids: string[], event: string, data: unknown) => void,
  ...all: [Client, Tenant][]
) {
  raise(
    all.map(([, tenant]) => tenant.conversationId),
    'test:settled',
    {},
  )
  await vi.waitFor(
    () => {
      for (const [client] of all) expect(client.received.at(-1)?.event).toBe('test:settled')
    },
    { timeout: 5_000, interval: 20 },
  )
}

const eventsOf = (client: Client) => client.received.filter(({ event }) => event !== 'test:settled')

describe('connecting', () => {
  test('refuses a handshake without a valid platform JWT carrying a chat identity', async ({ t, owner }) => {
    expect(await refusal({})).toBe('token required')
    expect(await refusal({ token: 42 })).toBe('token required')
    expect(await refusal({ token: 'not-a-jwt' })).toBe('invalid token')
    const claims = {
      uid: owner.userId,
      account_id: owner.accountId,
      conversation: { id: owner.conversationId },
    }
    const forged = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime('1h')
      .sign(new TextEncoder().encode('another-secret-another-secret-another-0'))
    expect(await refusal({ token: forged })).toBe('invalid token')
    // Expired beyond the 5 minutes of clock skew.
    const expired = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - 600)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET))
    expect(await refusal({ token: expired })).toBe('token expired')
    const withoutIdentity = await t.app.platform.tokens.sign(
      { uid: owner.userId, account_id: owner.accountId, parent_account: null },
      60,
    )
    expect(await refusal({ token: withoutIdentity })).toBe('token lacks conversation.id')
  })

  test("refuses the JWT of a suspended account's user and of a removed member, as the HTTP API does", async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Closing' })
    const colleague = await addUser(t.app, tenant.accountId, 'Grace Hopper')
    const admin = (method: 'PATCH' | 'DELETE', path: string, payload?: object) =>
      t.app.inject({ method, url: `/v1/admin${path}`, headers: adminHeaders, payload })
    await admin('DELETE', `/accounts/${tenant.accountId}/users/${colleague.userId}`)
    expect(await refusal({ token: colleague.token })).toBe('user is no longer a member of the account')
    await admin('PATCH', `/accounts/${tenant.accountId}`, { status: 'suspended' })
    expect(await refusal({ token: tenant.token })).toBe('Account is suspended')
    await admin('PATCH', `/accounts/${tenant.accountId}`, { status: 'active' })
    await connect({ token: tenant.token })
  })

  test('disconnects the clients of a member removed and of an account suspended while connected', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app, { name: 'Connected' })
    const [leaving, staying] = await Promise.all([
      addUser(t.app, tenant.accountId, 'Grace Hopper'),
      addUser(t.app, tenant.accountId, 'Alan Turing'),
    ])
    const [asOwner, asLeaving, asStaying] = await Promise.all([
      connect({ token: tenant.token }),
      connect({ token: leaving.token }),
      connect({ token: staying.token }),
    ])
    const admin = (method: 'PATCH' | 'DELETE', path: string, payload?: object) =>
      t.app.inject({ method, url: `/v1/admin${path}`, headers: adminHeaders, payload })
    await admin('DELETE', `/accounts/${tenant.accountId}/users/${leaving.userId}`)
    await vi.waitFor(() => expect(asLeaving.socket.connected).toBe(false), { timeout: 2_000, interval: 20 })
    expect(asOwner.socket.connected).toBe(true)
    expect(asStaying.socket.connected).toBe(true)
    await admin('PATCH', `/accounts/${tenant.accountId}`, { status: 'suspended' })
    await vi.waitFor(
      () => {
        expect(asOwner.socket.connected).toBe(false)
        expect(asStaying.socket.connected).toBe(false)
      },
      { timeout: 2_000, interval: 20 },
    )
  })

  test('disconnects a client when its platform JWT expires, as HTTP then answers 401', async ({
    t,
    owner,
  }) => {
    const claims = {
      uid: owner.userId,
      account_id: owner.accountId,
      conversation: { id: owner.conversationId },
    }
    // Accepted for 1 to 2 s more: expired 298 s ago, within the 300 s of clock skew every check allows.
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256' })
      .setExpirationTime(Math.floor(Date.now() / 1000) - CLOCK_SKEW_SECONDS + 2)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET))
    const expiring = await connect({ token })
    const lasting = await connect({ token: owner.token })
    await vi.waitFor(() => expect(expiring.socket.connected).toBe(false), { timeout: 5_000, interval: 50 })
    expect(lasting.socket.connected).toBe(true)
    const http = await t.app.inject({ url: '/v1/contacts', headers: { authorization: `Bearer ${token}` } })
    expect(http.statusCode).toBe(401)
  })

  test('accepts the platform JWT of a chat identity', async ({ owner }) => {
    const { socket } = await connect({ token: owner.token })
    expect(socket.connected).toBe(true)
  })
})

describe('delivery to chat identities', () => {
  test("reaches each socket of the identities named, once, and no one else's", async ({
    t,
    owner,
    stranger,
  }) => {
    const raise = t.app.platform.realtime.toIdentities
    const phone = await connect({ token: owner.token })
    const laptop = await connect({ token: owner.token })
    const other = await connect({ token: stranger.token })

    raise([owner.conversationId, owner.conversationId], 'room:created', { room: { _id: 'r1' } })
    await settle(raise, [phone, owner], [laptop, owner], [other, stranger])

    for (const client of [phone, laptop])
      expect(eventsOf(client)).toEqual([{ event: 'room:created', data: { room: { _id: 'r1' } } }])
    expect(eventsOf(other)).toEqual([])
  })

  test('an empty list of identities reaches no one', async ({ t, owner }) => {
    const raise = t.app.platform.realtime.toIdentities
    const client = await connect({ token: owner.token })
    raise([], 'room:created', {})
    await settle(raise, [client, owner])
    expect(eventsOf(client)).toEqual([])
  })
})

describe('events from clients', () => {
  const calls: { caller: ChatCaller; payload: unknown }[] = []
  test.beforeAll(({ t }) => {
    const { realtime } = t.app.platform
    realtime.onClientEvent('test:typing', (caller, payload) => void calls.push({ caller, payload }))
    realtime.onClientEvent('test:other', () => undefined)
    realtime.onClientEvent('test:refused', () => {
      throw new Forbidden('Cannot access this room')
    })
    realtime.onClientEvent('test:broken', () => {
      throw new Error('a bug')
    })
  })

  const send = (client: Client, event: string, payload: unknown = {}): Promise<ClientEventAnswer> =>
    client.socket.emitWithAck(event, payload)

  test("calls the event's handler with the socket's caller and the payload", async ({ owner }) => {
    const client = await connect({ token: owner.token })
    expect(await send(client, 'test:typing', { room_id: 'r1' })).toEqual({ ok: true })
    expect(calls.at(-1)).toEqual({
      caller: {
        uid: owner.userId,
        account_id: owner.accountId,
        parent_account: null,
        conversation: { id: owner.conversationId },
        iat: expect.any(Number),
      },
      payload: { room_id: 'r1' },
    })
    // Without an acknowledgement callback too.
    client.socket.emit('test:typing', { room_id: 'r2' })
    await vi.waitFor(() => expect(calls.at(-1)?.payload).toEqual({ room_id: 'r2' }))
  })

  test('answers unknown events and failed handlers without the details of a failure', async ({ owner }) => {
    const client = await connect({ token: owner.token })
    expect(await send(client, 'test:unknown')).toEqual({ ok: false, error: 'Unknown event test:unknown' })
    expect(await send(client, 'test:refused')).toEqual({ ok: false, error: 'Cannot access this room' })
    expect(await send(client, 'test:broken')).toEqual({ ok: false, error: 'Internal error' })
    expect(client.socket.connected).toBe(true)
  })

  test(`takes at most ${CLIENT_EVENT_LIMIT} events of a name per socket in ${CLIENT_EVENT_WINDOW_MS} ms`, async ({
    owner,
  }) => {
    vi.useFakeTimers({ toFake: ['Date'] })
    const client = await connect({ token: owner.token })
    const before = calls.length
    const answers = []
    for (let i = 0; i < CLIENT_EVENT_LIMIT + 3; i++) answers.push(await send(client, 'test:typing', { i }))
    expect(answers.filter((answer) => answer.ok)).toHaveLength(CLIENT_EVENT_LIMIT)
    expect(answers.slice(CLIENT_EVENT_LIMIT)).toEqual(Array(3).fill({ ok: false, error: 'Too many events' }))
    expect(calls.slice(before).map(({ payload }) => payload)).toEqual(
      Array.from({ length: CLIENT_EVENT_LIMIT }, (_, i) => ({ i })),
    )
    // Another event name, and another socket of the same identity, have their own allowance.
    expect(await send(client, 'test:other')).toEqual({ ok: true })
    expect(await send(await connect({ token: owner.token }), 'test:typing')).toEqual({ ok: true })
    // The window slides: once it has passed, the socket may send again.
    vi.setSystemTime(Date.now() + CLIENT_EVENT_WINDOW_MS - 1)
    expect(await send(client, 'test:typing')).toEqual({ ok: false, error: 'Too many events' })
    vi.setSystemTime(Date.now() + 1)
    expect(await send(client, 'test:typing')).toEqual({ ok: true })
  })
})

describe.skipIf(!redisUrl)('across instances sharing Redis', () => {
  test('an event raised on one instance reaches the clients of another, once', async ({
    t,
    owner,
    stranger,
  }) => {
    const other = await anotherInstance(t)
    try {
      const otherUrl = await other.listen({ port: 0, host: '127.0.0.1' })
      const here = await connect({ token: owner.token })
      const there = await connect({ token: owner.token }, otherUrl)
      const elsewhere = await connect({ token: stranger.token }, otherUrl)
      const raise = other.platform.realtime.toIdentities

      raise([owner.conversationId, owner.conversationId], 'message:new', { message: { _id: 'm1' } })
      await settle(raise, [here, owner], [there, owner], [elsewhere, stranger])

      for (const client of [here, there])
        expect(eventsOf(client)).toEqual([{ event: 'message:new', data: { message: { _id: 'm1' } } }])
      expect(eventsOf(elsewhere)).toEqual([])
    } finally {
      await other.close()
    }
  })
})

describe('a handshake whose lookups fail', () => {
  /** The gateway alone on a server of its own, its account check failing with `error`; its URL and logs. */
  async function gatewayFailingWith(error: Error) {
    const logs = captureLogs()
    const server = createServer()
    const auth = { uid: 'u1', account_id: 'a1', conversation: { id: 'c1' } }
    const gateway = createRealtimeGateway({
      server,
      tokens: { verify: async () => auth, acceptedUntil: () => undefined } as unknown as PlatformTokens,
      accountAccess: {
        refusalFor: async () => {
          throw error
        },
      },
      redis: undefined,
      logger: pino({}, logs.stream),
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    onTestFinished(async () => {
      await gateway.close()
      server.close()
    })
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, logs }
  }

  it('refuses the connection as unavailable, with the wait to retry after, when the pool has no connection in time', async () => {
    const poolTimeout = new Error('Failed query: select …', {
      cause: new Error('timeout exceeded when trying to connect'),
    })
    const { url, logs } = await gatewayFailingWith(poolTimeout)
    const error = await connect({ token: 'a-token' }, url).then(
      () => expect.fail('the connection was accepted'),
      (refused: Error & { data?: unknown }) => refused,
    )
    expect(error.message).toBe('Service unavailable')
    expect(error.data).toEqual({ reason: 'the database did not answer in time', retry_after: 2 })
    expect(logs.lines).toContainEqual(
      expect.objectContaining({ level: 40, dependency: 'database', waitedFor: 'connection' }),
    )
    // The gateway goes on: the next handshake is answered the same way, not left hanging.
    await expect(connect({ token: 'a-token' }, url)).rejects.toThrow('Service unavailable')
  })

  it('refuses the connection with an internal error, logged, for any other failure', async () => {
    const { url, logs } = await gatewayFailingWith(new Error('a bug'))
    await expect(connect({ token: 'a-token' }, url)).rejects.toThrow('Internal error')
    expect(logs.lines).toContainEqual(expect.objectContaining({ level: 50, msg: 'socket handshake failed' }))
  })
})
