import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, describe, expect, vi } from 'vitest'
import { type FakeServer, type RecordedRequest, startFakeServer } from '../../../test/fakes/http-server.js'
import { adminHeaders, bearer, type TestApp } from '../../../test/helpers/app.js'
import type { Tenant } from '../../../test/helpers/fixtures.js'
import {
  createUser,
  obtainTokens,
  type RegisteredApp,
  registerApp,
  revokeGrant,
} from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'

type AppWithWebhook = RegisteredApp & { webhook_secret: string }

test.override('appEnv', {
  RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE: '1000',
  APP_WEBHOOK_RETRY_SCHEDULE: '1s,1s,1s',
  APP_WEBHOOK_POLL_MS: '100',
})

const notificationOf = (request: RecordedRequest, secret: string) =>
  new Webhook(secret).verify(request.body, request.headers as Record<string, string>) as {
    event: string
    data: Record<string, unknown>
    account_id: string
    timestamp: string
  }
const createContact = async (t: TestApp, tenant: Tenant, email: string) => {
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/contacts',
    headers: tenant.headers,
    payload: { email, name: 'Grace Hopper' },
  })
  expect(response.statusCode).toBe(201)
  return response.json().data as { _id: string; email: string }
}

/**
 * Apps of the owner account ("home") and of the stranger's ("elsewhere"), each told at its own path of one
 * receiver.
 */
describe('app webhook notifications of contact changes', () => {
  let receiver: FakeServer
  /** Status the receiver answers per path, once each; 200 when none is left. */
  const failures = new Map<string, number[]>()
  let listener: AppWithWebhook
  let analytics: AppWithWebhook
  let outsider: AppWithWebhook
  let writerToken: string
  let elsewhereOwnerId: string

  const delivered = (path: string) => receiver.requests.filter((request) => request.url === path)

  beforeAll(async () => {
    receiver = await startFakeServer((request, response) => {
      response.statusCode = failures.get(request.url)?.shift() ?? 200
      response.end()
    })
  })
  afterAll(() => receiver.close())

  test.beforeAll(async ({ t, owner: home, stranger: elsewhere }) => {
    const app = async (path: string, scopes: string[]) =>
      (await registerApp(t.app, { scopes, webhook_url: `${receiver.url}${path}` })) as AppWithWebhook
    await createUser(t.app, 'owner@home.example', [home.accountId])
    elsewhereOwnerId = (await createUser(t.app, 'owner@elsewhere.example', [elsewhere.accountId]))._id
    listener = await app('/listener', ['crm.contacts.read', 'crm.contacts.write'])
    analytics = await app('/analytics', ['analytics.read'])
    outsider = await app('/outsider', ['crm.contacts.read'])
    const quiet = await registerApp(t.app, { scopes: ['crm.contacts.read'] })
    writerToken = (await obtainTokens(t.app, listener, 'owner@home.example')).access_token
    await obtainTokens(t.app, analytics, 'owner@home.example')
    await obtainTokens(t.app, outsider, 'owner@elsewhere.example')
    await obtainTokens(t.app, quiet, 'owner@home.example')
  })

  test('signs contact.created to each app authorized to read contacts in the account, and to no other', async ({
    t,
    owner: home,
    stranger: elsewhere,
  }) => {
    const contact = await createContact(t, home, 'grace@home.example')
    await createContact(t, elsewhere, 'grace@elsewhere.example')

    await vi.waitFor(() => expect(delivered('/outsider')).toHaveLength(1), { timeout: 10_000 })
    await vi.waitFor(() => expect(delivered('/listener')).toHaveLength(1), { timeout: 10_000 })
    const [request] = delivered('/listener') as [RecordedRequest]
    expect(request.method).toBe('POST')
    expect(request.headers['content-type']).toBe('application/json')
    expect(request.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{24}$/)
    const notification = notificationOf(request, listener.webhook_secret)
    expect(notification).toEqual({
      event: 'contact.created',
      data: expect.objectContaining({
        _id: contact._id,
        email: 'grace@home.example',
        account_id: home.accountId,
      }),
      account_id: home.accountId,
      timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    })
    expect(
      notificationOf(delivered('/outsider')[0] as RecordedRequest, outsider.webhook_secret),
    ).toMatchObject({
      account_id: elsewhere.accountId,
      data: { email: 'grace@elsewhere.example' },
    })
    // Signed with the app's own secret: another app's does not verify it.
    expect(() => notificationOf(request, outsider.webhook_secret)).toThrow()
    // Queued in the same transaction as the others: an app without crm.contacts.read got nothing.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(delivered('/analytics')).toHaveLength(0)
  })

  test('tells of contact.updated when a change alters the contact, made with the app’s own write scope too', async ({
    t,
    owner: home,
  }) => {
    const contact = await createContact(t, home, 'ada@home.example')
    await vi.waitFor(() => expect(delivered('/listener')).toHaveLength(2), { timeout: 10_000 })
    const patch = (payload: object, headers = bearer(writerToken)) =>
      t.app.inject({ method: 'PATCH', url: `/v1/contacts/${contact._id}`, headers, payload })

    expect((await patch({ name: 'Ada King' })).statusCode).toBe(200)
    await vi.waitFor(() => expect(delivered('/listener')).toHaveLength(3), { timeout: 10_000 })
    expect(
      notificationOf(delivered('/listener')[2] as RecordedRequest, listener.webhook_secret),
    ).toMatchObject({
      event: 'contact.updated',
      data: { _id: contact._id, name: 'Ada King' },
    })

    // Nothing changed, and a refused change: no notification; the next real change is the next one told.
    expect((await patch({ name: 'Ada King' }, home.headers)).statusCode).toBe(200)
    expect((await patch({ email: 'grace@home.example' }, home.headers)).statusCode).toBe(409)
    expect((await patch({ phone: '+1 555 0101' }, home.headers)).statusCode).toBe(200)
    await vi.waitFor(() => expect(delivered('/listener')).toHaveLength(4), { timeout: 10_000 })
    expect(
      notificationOf(delivered('/listener')[3] as RecordedRequest, listener.webhook_secret),
    ).toMatchObject({
      event: 'contact.updated',
      data: { phone: '+1 555 0101' },
    })
  })

  test('retries a failed delivery with the same webhook-id and a fresh signature', async ({
    t,
    stranger: elsewhere,
  }) => {
    failures.set('/outsider', [500, 503])
    await createContact(t, elsewhere, 'retry@elsewhere.example')
    await vi.waitFor(() => expect(delivered('/outsider')).toHaveLength(4), { timeout: 30_000, interval: 200 })
    const attempts = delivered('/outsider').slice(1)
    expect(new Set(attempts.map((a) => a.headers['webhook-id'])).size).toBe(1)
    for (const attempt of attempts)
      expect(notificationOf(attempt, outsider.webhook_secret)).toMatchObject({
        data: { email: 'retry@elsewhere.example' },
      })
  }, 40_000)

  test('signs with a rotated webhook secret at once, and stores secrets only sealed', async ({
    t,
    owner: home,
  }) => {
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/oauth/apps/${listener._id}/webhook-secret`,
      headers: adminHeaders,
    })
    expect(rotated.statusCode).toBe(200)
    const { webhook_secret: secret } = rotated.json().data as { webhook_secret: string }
    expect(secret).toMatch(/^whsec_/)
    expect(secret).not.toBe(listener.webhook_secret)
    const stored = await t.database.handle.db.execute(
      `select webhook_secret_sealed from oauth_apps where id = '${listener._id}'`,
    )
    expect(JSON.stringify(stored)).not.toContain(secret.slice('whsec_'.length))

    const before = delivered('/listener').length
    await createContact(t, home, 'rotated@home.example')
    await vi.waitFor(() => expect(delivered('/listener')).toHaveLength(before + 1), { timeout: 10_000 })
    const request = delivered('/listener')[before] as RecordedRequest
    expect(notificationOf(request, secret)).toMatchObject({ data: { email: 'rotated@home.example' } })
    expect(() => notificationOf(request, listener.webhook_secret)).toThrow()
  })

  test('tells an app nothing more once its access to the account is taken back', async ({
    t,
    owner: home,
    stranger: elsewhere,
  }) => {
    const revoked = await revokeGrant(t.app, {
      userId: elsewhereOwnerId,
      accountId: elsewhere.accountId,
      clientId: outsider._id,
    })
    expect(revoked.statusCode).toBe(200)
    const before = delivered('/outsider').length
    // The listener in the other account is the signal that the change's jobs have run.
    await createContact(t, elsewhere, 'after@elsewhere.example')
    await createContact(t, home, 'signal@home.example')
    const told = delivered('/listener').length
    await vi.waitFor(() => expect(delivered('/listener').length).toBeGreaterThan(told), { timeout: 10_000 })
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(delivered('/outsider')).toHaveLength(before)
  })
})
