import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { anId } from '../../../test/helpers/fixtures.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LABEL_MAX_LENGTH } from '../../platform/http/schemas.js'
import { oauthApps } from './tables.js'

const SPEC_SCOPES = [
  'crm.contacts.read',
  'crm.contacts.write',
  'crm.deals.read',
  'crm.deals.write',
  'billing.read',
  'projects.tasks.read',
  'analytics.read',
  'sites.read',
  'sites.write',
]
/** Added with the reviews module. */
const REVIEWS_SCOPES = ['reviews.read', 'reviews.write']
const LEADS_SCOPES = ['leads.read', 'leads.write']

const newApp = (overrides: Record<string, unknown> = {}) => ({
  name: 'Reporting Hub',
  redirect_uris: ['https://hub.example.com/oauth/callback'],
  scopes: ['crm.contacts.read', 'analytics.read'],
  ...overrides,
})

const admin = (t: TestApp, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  t.app.inject({ method, url: `/v1/admin/oauth${url}`, headers: adminHeaders, payload })
const storedRow = async (t: TestApp, id: string) =>
  (await t.app.platform.db.select().from(oauthApps).where(eq(oauthApps.id, id)))[0]

describe('OAuth apps and scopes (admin API)', () => {
  test("holds the spec's nine scopes, the reviews and the leads scopes, with descriptions and categories", async ({
    t,
  }) => {
    const response = await admin(t, 'GET', '/scopes')
    expect(response.statusCode).toBe(200)
    const scopes = response.json().data as { scope: string; description: string; category: string }[]
    expect(scopes.map((s) => s.scope).sort()).toEqual(
      [...SPEC_SCOPES, ...REVIEWS_SCOPES, ...LEADS_SCOPES].sort(),
    )
    for (const scope of scopes) {
      expect(scope.description).not.toBe('')
      expect(scope.category).not.toBe('')
    }
  })

  test('registers an app, showing its client and webhook secrets once, keeping a keyed hash and a sealed copy', async ({
    t,
  }) => {
    const response = await admin(t, 'POST', '/apps', newApp({ webhook_url: 'https://hub.example.com/hooks' }))
    expect(response.statusCode).toBe(201)
    const created = response.json().data
    expect(created).toMatchObject({
      _id: anId,
      name: 'Reporting Hub',
      redirect_uris: ['https://hub.example.com/oauth/callback'],
      scopes: ['crm.contacts.read', 'analytics.read'],
      active: false,
      public: false,
      created_by: null,
      webhook_url: 'https://hub.example.com/hooks',
    })
    expect(created.client_id).toBe(created._id)
    // 256 random bits, base64url.
    expect(created.client_secret).toMatch(/^[\w-]{43}$/)

    const row = await storedRow(t, created._id)
    expect(row?.clientSecretHash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(row)).not.toContain(created.client_secret)
    const read = await admin(t, 'GET', `/apps/${created._id}`)
    expect(read.body).not.toContain(created.client_secret)
    expect(read.json().data).not.toHaveProperty('client_secret')
    // The webhook secret signs notifications, so it is kept encrypted rather than hashed, and not shown again.
    expect(created.webhook_secret).toMatch(/^whsec_[\w+/]{43}=$/)
    expect(row?.webhookSecretSealed).toMatch(/^v1\./)
    expect(JSON.stringify(row)).not.toContain(created.webhook_secret.slice('whsec_'.length))
    expect(read.body).not.toContain(created.webhook_secret.slice('whsec_'.length))
  })

  test('accepts http redirect URIs only on loopback addresses, and known scopes only', async ({ t }) => {
    const loopback = await admin(
      t,
      'POST',
      '/apps',
      newApp({
        redirect_uris: ['http://127.0.0.1:8765/callback', 'http://localhost/cb', 'http://[::1]:9000/cb'],
        public: true,
      }),
    )
    expect(loopback.statusCode).toBe(201)
    expect(loopback.json().data.public).toBe(true)

    const refusals: [Record<string, unknown>, string][] = [
      [
        { redirect_uris: ['http://hub.example.com/cb'] },
        'redirect_uris[0] must use https, or http on a loopback address',
      ],
      [
        { redirect_uris: ['https://ok.example.com/cb', '/relative'] },
        'redirect_uris[1] must be an absolute URL',
      ],
      [{ redirect_uris: ['https://hub.example.com/cb#frag'] }, 'redirect_uris[0] must not have a fragment'],
      [{ redirect_uris: [] }, 'redirect_uris must contain at least 1 items'],
      [{ scopes: ['crm.contacts.read', 'mail.send'] }, 'scopes has unknown scopes: mail.send'],
      [{ webhook_url: 'ftp://hub.example.com' }, 'webhook_url must be an http(s) URL'],
      [{ name: '' }, 'name must not be empty'],
    ]
    for (const [overrides, message] of refusals) {
      const response = await admin(t, 'POST', '/apps', newApp(overrides))
      expect(response.json(), message).toMatchObject({ success: false, errno: 400, message })
    }
  })

  test('lists apps newest first, paginated, and reads one', async ({ t }) => {
    const first = (await admin(t, 'POST', '/apps', newApp({ name: 'First' }))).json().data
    const second = (await admin(t, 'POST', '/apps', newApp({ name: 'Second' }))).json().data
    const page = await admin(t, 'GET', '/apps?limit=1')
    expect(page.json().pagination).toMatchObject({ page: 1, limit: 1 })
    expect(page.json().pagination.total).toBeGreaterThanOrEqual(2)
    expect(page.json().data.map((a: { _id: string }) => a._id)).toEqual([second._id])
    expect((await admin(t, 'GET', '/apps?limit=1&page=2')).json().data[0]._id).toBe(first._id)
    expect((await admin(t, 'GET', `/apps/${first._id}`)).json().data.name).toBe('First')
    const missing = await admin(t, 'GET', '/apps/0123456789abcdef01234567')
    expect(missing.json()).toMatchObject({ errno: 404, message: 'App not found' })
  })

  test('updates an app: activation, scopes, and clearing the webhook URL', async ({ t }) => {
    const created = (
      await admin(t, 'POST', '/apps', newApp({ webhook_url: 'https://hub.example.com/h' }))
    ).json().data
    const updated = await admin(t, 'PATCH', `/apps/${created._id}`, {
      active: true,
      scopes: ['sites.read', 'sites.write'],
      webhook_url: null,
    })
    expect(updated.json().data).toMatchObject({
      active: true,
      scopes: ['sites.read', 'sites.write'],
      webhook_url: null,
      name: 'Reporting Hub',
    })
    expect((await admin(t, 'PATCH', `/apps/${created._id}`, {})).statusCode).toBe(400)
    expect((await admin(t, 'PATCH', `/apps/${created._id}`, { scopes: ['nope'] })).json().message).toBe(
      'scopes has unknown scopes: nope',
    )
    // A scope name is a short label, refused past its bound before it is looked up.
    const longScope = await admin(t, 'PATCH', `/apps/${created._id}`, {
      scopes: ['s'.repeat(LABEL_MAX_LENGTH + 1)],
    })
    expect(longScope.json()).toMatchObject({
      errno: 400,
      message: `scopes[0] must be at most ${LABEL_MAX_LENGTH} characters long`,
    })
    expect((await admin(t, 'PATCH', '/apps/0123456789abcdef01234567', { active: true })).statusCode).toBe(404)
  })

  test('rotates the client secret: a new one, shown once, replaces the old hash', async ({ t }) => {
    const created = (await admin(t, 'POST', '/apps', newApp())).json().data
    const before = (await storedRow(t, created._id))?.clientSecretHash
    const rotated = await admin(t, 'POST', `/apps/${created._id}/secret`)
    expect(rotated.statusCode).toBe(200)
    expect(rotated.json().data).toEqual({
      client_id: created._id,
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
    })
    expect(rotated.json().data.client_secret).not.toBe(created.client_secret)
    expect((await storedRow(t, created._id))?.clientSecretHash).not.toBe(before)
    expect((await admin(t, 'POST', '/apps/0123456789abcdef01234567/secret')).statusCode).toBe(404)
  })

  test('registers a public app without a client secret (RFC 6749 2.1), rotates none for it, and drops the secret of an app made public', async ({
    t,
  }) => {
    const created = await admin(t, 'POST', '/apps', newApp({ public: true }))
    expect(created.statusCode).toBe(201)
    const spa = created.json().data
    expect(spa).toMatchObject({ public: true, client_id: spa._id, client_secret: null })
    expect((await storedRow(t, spa._id))?.clientSecretHash).toBeNull()
    expect((await admin(t, 'POST', `/apps/${spa._id}/secret`)).json()).toMatchObject({
      errno: 400,
      message: 'A public app has no client secret: it authenticates by client_id and PKCE',
    })

    const confidential = (await admin(t, 'POST', '/apps', newApp())).json().data
    expect((await admin(t, 'PATCH', `/apps/${confidential._id}`, { public: true })).statusCode).toBe(200)
    expect((await storedRow(t, confidential._id))?.clientSecretHash).toBeNull()
  })

  test('requires the admin token', async ({ t }) => {
    const response = await t.app.inject({ method: 'GET', url: '/v1/admin/oauth/apps' })
    expect(response.statusCode).toBe(401)
    const asTenant = await t.app.inject({
      method: 'POST',
      url: '/v1/admin/oauth/apps',
      headers: { authorization: 'Bearer not-the-admin-token' },
      payload: newApp(),
    })
    expect(asTenant.statusCode).toBe(401)
  })
})
