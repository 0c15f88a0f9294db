import type { ServerResponse } from 'node:http'
import { afterAll, beforeAll, describe, expect } from 'vitest'
import { type FakeServer, type RecordedRequest, startFakeServer } from '../../../test/fakes/http-server.js'
import { adminHeaders, anotherInstance, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import { eventually } from '../../../test/helpers/jobs.js'
import { createUser, obtainTokens, registerApp, revokeGrant } from '../../../test/helpers/oauth.js'
import { removedInPlace } from '../../../test/helpers/removed-in-place.js'
import { test } from '../../../test/helpers/tenant-test.js'

const PER_APP = 2
const TIMEOUT_MS = 2_000

// A schedule of two 1-second retries (waits of 0.5 to 1 s with jitter): a delivery is dead within seconds.
test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  APP_WEBHOOK_RETRY_SCHEDULE: '1s,1s',
  APP_WEBHOOK_TIMEOUT_MS: String(TIMEOUT_MS),
  APP_WEBHOOK_CONCURRENCY_PER_APP: String(PER_APP),
  APP_WEBHOOK_POLL_MS: '100',
  // A delivery's grant is checked again once it is older than this.
  OAUTH_REVOCATION_CACHE_MS: '100',
})

interface Attempt {
  at: string
  status_code: number | null
  duration_ms: number
  error: string | null
}
interface Delivery {
  _id: string
  webhook_id: string
  client_id: string
  status: string
  attempts: Attempt[]
  notification: { event: string; data: { email: string } }
}

const deliveriesUrl = (clientId: string) => `/v1/admin/oauth/apps/${clientId}/webhook-deliveries`

const listDeliveries = async (t: TestApp, clientId: string, query = '') => {
  const response = await t.app.inject({ url: `${deliveriesUrl(clientId)}${query}`, headers: adminHeaders })
  expect(response.statusCode, response.body).toBe(200)
  return response.json() as { data: Delivery[]; pagination: { total: number } }
}

const replay = (t: TestApp, clientId: string, deliveryId: string) =>
  t.app.inject({
    method: 'POST',
    url: `${deliveriesUrl(clientId)}/${deliveryId}/replay`,
    headers: adminHeaders,
  })

const createContact = async (t: TestApp, tenant: Tenant, email: string) => {
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/contacts',
    headers: tenant.headers,
    payload: { email },
  })
  expect(response.statusCode, response.body).toBe(201)
}

/**
 * One receiver for every app of the file, each at its own path: a path answers the statuses queued for it,
 * once each, then 200; `/hang/...` paths never answer, and count the requests held open at once.
 */
describe('app webhook deliveries', () => {
  let receiver: FakeServer
  const statuses = new Map<string, number[]>()
  /** Per path, what the receiver does before it answers its next request. */
  const beforeAnswering = new Map<string, () => Promise<unknown>>()
  /** Per `/hang/...` path, the requests held open now, and the most at once. */
  const held = new Map<string, { now: number; most: number }>()
  const heldAt = (path: string) => held.get(path) ?? { now: 0, most: 0 }
  const received = (path: string) => receiver.requests.filter((request) => request.url === path)

  /**
   * Counts the request as open a moment after it arrived: the server may read a new request before the close
   * of the one the sender aborted just before sending it. A request held beyond the bound stays open for the
   * whole timeout, so the moment hides none.
   */
  function hold(path: string, response: ServerResponse) {
    setTimeout(() => {
      if (response.closed) return
      const open = heldAt(path)
      held.set(path, { now: open.now + 1, most: Math.max(open.most, open.now + 1) })
      response.on('close', () => {
        const { now, most } = heldAt(path)
        held.set(path, { now: now - 1, most })
      })
    }, 20)
  }

  beforeAll(async () => {
    receiver = await startFakeServer((request: RecordedRequest, response) => {
      if (request.url.startsWith('/hang/')) return hold(request.url, response)
      const answer = () => {
        response.statusCode = statuses.get(request.url)?.shift() ?? 200
        response.end()
      }
      const first = beforeAnswering.get(request.url)
      beforeAnswering.delete(request.url)
      if (first) first().finally(answer)
      else answer()
    })
  })
  afterAll(() => receiver.close())

  /** A new account and an app told of its contacts at `path`. */
  async function listeningApp(t: TestApp, path: string) {
    const tenant = await createTenant(t.app)
    const email = `owner${path.replaceAll('/', '-')}@deliveries.example`
    const user = await createUser(t.app, email, [tenant.accountId])
    const app = await registerApp(t.app, {
      scopes: ['crm.contacts.read'],
      webhook_url: `${receiver.url}${path}`,
    })
    await obtainTokens(t.app, app, email)
    return { tenant, app, userId: user._id as string }
  }

  test('retries a failing app on the schedule, then marks the delivery dead, listing every attempt', async ({
    t,
  }) => {
    const { tenant, app } = await listeningApp(t, '/failing')
    statuses.set('/failing', [500, 503, 502])
    await createContact(t, tenant, 'dead@deliveries.example')

    const [delivery] = await eventually(
      async () => {
        const { data } = await listDeliveries(t, app._id)
        expect(data[0]?.status).toBe('dead')
        return data as [Delivery]
      },
      { timeout: 30_000 },
    )
    expect(received('/failing')).toHaveLength(3)
    expect(delivery).toMatchObject({
      webhook_id: `msg_${delivery._id}`,
      client_id: app._id,
      account_id: tenant.accountId,
      event: 'contact.created',
      next_attempt_at: null,
      notification: { event: 'contact.created', data: { email: 'dead@deliveries.example' } },
    })
    expect(delivery.attempts.map((attempt) => attempt.status_code)).toEqual([500, 503, 502])
    for (const attempt of delivery.attempts) {
      expect(attempt.error).toBeNull()
      expect(attempt.duration_ms).toBeGreaterThanOrEqual(0)
    }
    // Waits of half a step to a step (0.5 to 1 s) between attempts.
    const times = delivery.attempts.map((attempt) => Date.parse(attempt.at))
    for (let i = 1; i < times.length; i++)
      expect((times[i] as number) - (times[i - 1] as number)).toBeGreaterThanOrEqual(500)
    // Every attempt under the one webhook-id.
    expect(new Set(received('/failing').map((request) => request.headers['webhook-id']))).toEqual(
      new Set([delivery.webhook_id]),
    )

    expect((await listDeliveries(t, app._id, '?status=dead')).data.map((d) => d._id)).toEqual([delivery._id])
    expect((await listDeliveries(t, app._id, '?status=succeeded')).pagination.total).toBe(0)
  }, 60_000)

  test('replays a delivery with the same webhook-id, once however often the replay is asked', async ({
    t,
  }) => {
    const { tenant, app } = await listeningApp(t, '/replayed')
    statuses.set('/replayed', [500, 500, 500])
    await createContact(t, tenant, 'replayed@deliveries.example')
    const dead = await eventually(
      async () => {
        const [delivery] = (await listDeliveries(t, app._id, '?status=dead')).data
        expect(delivery).toBeDefined()
        return delivery as Delivery
      },
      { timeout: 30_000 },
    )

    const replayed = await replay(t, app._id, dead._id)
    expect(replayed.statusCode, replayed.body).toBe(202)
    expect(replayed.json().data).toMatchObject({ _id: dead._id, status: 'pending' })
    // Asked again before it went out: nothing more is queued.
    expect((await replay(t, app._id, dead._id)).statusCode).toBe(202)

    const delivered = await eventually(async () => {
      const [delivery] = (await listDeliveries(t, app._id, '?status=succeeded')).data
      expect(delivery).toBeDefined()
      return delivery as Delivery
    })
    expect(delivered.attempts.map((attempt) => attempt.status_code)).toEqual([500, 500, 500, 200])
    await new Promise((resolve) => setTimeout(resolve, 1_000))
    const requests = received('/replayed')
    expect(requests).toHaveLength(4)
    expect(requests.at(-1)?.headers['webhook-id']).toBe(dead.webhook_id)
    expect(requests.at(-1)?.body).toBe(requests[0]?.body)
  }, 60_000)

  test("holds an app that never answers to its bound, timing each attempt out, while another app's deliveries arrive at once", async ({
    t,
  }) => {
    const silent = await listeningApp(t, '/hang/silent')
    const healthy = await listeningApp(t, '/prompt')
    for (let i = 0; i < 6; i++) await createContact(t, silent.tenant, `silent-${i}@deliveries.example`)
    await eventually(() => expect(heldAt('/hang/silent').now).toBe(PER_APP))

    const started = Date.now()
    await createContact(t, healthy.tenant, 'prompt@deliveries.example')
    await eventually(() => expect(received('/prompt')).toHaveLength(1))
    // Sent while the silent app's attempts are held open: within the poll and the call, not behind them.
    expect(Date.now() - started).toBeLessThan(TIMEOUT_MS)

    const timedOut = await eventually(async () => {
      const { data } = await listDeliveries(t, silent.app._id, '?status=retrying')
      expect(data.length).toBeGreaterThan(0)
      return data[0] as Delivery
    })
    expect(timedOut.attempts[0]).toMatchObject({
      status_code: null,
      error: `no answer within ${TIMEOUT_MS} ms`,
    })
    expect(timedOut.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50)
    expect(heldAt('/hang/silent').most).toBe(PER_APP)
  }, 60_000)

  test('keeps the bound across instances sharing the database', async ({ t }) => {
    const second = await anotherInstance(t)
    try {
      const silent = await listeningApp(t, '/hang/shared')
      for (let i = 0; i < 6; i++) await createContact(t, silent.tenant, `shared-${i}@deliveries.example`)
      // Ten attempts: ten claims of each instance racing for the app's free slot.
      await eventually(() => expect(received('/hang/shared').length).toBeGreaterThanOrEqual(10), {
        timeout: 20_000,
      })
      expect(heldAt('/hang/shared').most).toBe(PER_APP)
    } finally {
      await second.close()
    }
  }, 60_000)

  test("answers 404 for an unknown app, and for another app's or an unknown delivery; 400 naming a bad status", async ({
    t,
  }) => {
    const { tenant, app } = await listeningApp(t, '/owner-of-delivery')
    const other = await registerApp(t.app, { scopes: ['crm.contacts.read'] })
    await createContact(t, tenant, 'owned@deliveries.example')
    const [delivery] = await eventually(async () => {
      const { data } = await listDeliveries(t, app._id)
      expect(data).toHaveLength(1)
      return data as [Delivery]
    })

    const unknownApp = await t.app.inject({ url: deliveriesUrl('0'.repeat(24)), headers: adminHeaders })
    expect(unknownApp.statusCode).toBe(404)
    expect(unknownApp.json()).toMatchObject({ errno: 404, message: 'App not found' })
    expect((await replay(t, '0'.repeat(24), delivery._id)).json()).toMatchObject({ message: 'App not found' })
    for (const [clientId, deliveryId] of [
      [other._id, delivery._id],
      [app._id, '0'.repeat(24)],
    ] as const) {
      const response = await replay(t, clientId, deliveryId)
      expect(response.statusCode).toBe(404)
      expect(response.json()).toMatchObject({ errno: 404, message: 'Webhook delivery not found' })
    }
    expect((await listDeliveries(t, other._id)).pagination.total).toBe(0)

    const badStatus = await t.app.inject({
      url: `${deliveriesUrl(app._id)}?status=lost`,
      headers: adminHeaders,
    })
    expect(badStatus.statusCode).toBe(400)
    expect(badStatus.json().message).toMatch(
      /^status must be one of: pending, retrying, succeeded, dead, dropped/,
    )
    expect((await t.app.inject({ url: deliveriesUrl(app._id) })).statusCode).toBe(401)
  })

  test('drops a waiting delivery once its app has no webhook_url, saying why', async ({ t }) => {
    const { tenant, app } = await listeningApp(t, '/unregistered')
    statuses.set('/unregistered', [500])
    await createContact(t, tenant, 'dropped@deliveries.example')
    await eventually(() => expect(received('/unregistered')).toHaveLength(1))
    const changed = await t.app.inject({
      method: 'PATCH',
      url: `/v1/admin/oauth/apps/${app._id}`,
      headers: adminHeaders,
      payload: { webhook_url: null },
    })
    expect(changed.statusCode, changed.body).toBe(200)
    const [dropped] = await eventually(async () => {
      const { data } = await listDeliveries(t, app._id, '?status=dropped')
      expect(data).toHaveLength(1)
      return data as [Delivery]
    })
    expect(dropped).toMatchObject({
      dropped_reason: 'the app has no webhook_url any more',
      next_attempt_at: null,
    })
    expect(dropped.attempts).toHaveLength(1)
    expect(received('/unregistered')).toHaveLength(1)
  })

  test('drops a retried delivery once its app lost its grant in the account', async ({ t }) => {
    const { tenant, app, userId } = await listeningApp(t, '/revoked')
    statuses.set('/revoked', [500])
    // The grant is taken back while the first attempt waits for its answer: the retry comes after.
    let revoked: Awaited<ReturnType<typeof revokeGrant>> | undefined
    beforeAnswering.set('/revoked', async () => {
      revoked = await revokeGrant(t.app, { userId, accountId: tenant.accountId, clientId: app._id })
    })
    await createContact(t, tenant, 'revoked@deliveries.example')
    await eventually(() => expect(revoked?.statusCode, revoked?.body).toBe(200))
    const [dropped] = await eventually(async () => {
      const { data } = await listDeliveries(t, app._id, '?status=dropped')
      expect(data).toHaveLength(1)
      return data as [Delivery]
    })
    expect(dropped).toMatchObject({ dropped_reason: 'the app no longer holds a grant in the account' })
    expect(received('/revoked')).toHaveLength(1)
  })

  test('drops a retried delivery once its account is removed, before the removal reaches its rows', async ({
    t,
  }) => {
    const { tenant, app } = await listeningApp(t, '/removed-account')
    statuses.set('/removed-account', [500])
    // Removed while the first attempt waits for its answer: the retry comes after.
    beforeAnswering.set('/removed-account', () => removedInPlace(t, tenant.accountId))
    await createContact(t, tenant, 'removed@deliveries.example')
    const [dropped] = await eventually(async () => {
      const { data } = await listDeliveries(t, app._id, '?status=dropped')
      expect(data).toHaveLength(1)
      return data as [Delivery]
    })
    expect(dropped).toMatchObject({ dropped_reason: 'the account is removed or suspended' })
    expect(received('/removed-account')).toHaveLength(1)
  })
})
