import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { adminHeaders, buildTestApp, type TestApp } from '../../../test/helpers/app.js'
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

const newApp = (overrides: Record<string, unknown> = {}) => ({
  name: 'Reporting Hub',
  redirect_uris: ['https://hub.example.com/oauth/callback'],
  scopes: ['crm.contacts.read', 'analytics.read'],
  ...overrides,
})

describe('OAuth apps and scopes (admin API)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  const admin = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    t.app.inject({ method, url: `/v1/admin/oauth${url}`, headers: adminHeaders, payload })
  const storedRow = async (id: string) =>
    (await t.app.platform.db.select().from(oauthApps).where(eq(oauthApps.id, id)))[0]

  it("holds the spec's nine scopes with descriptions and categories", async () => {
    const response = await admin('GET', '/scopes')
    expect(response.statusCode).toBe(200)
    const scopes = response.json().data as { scope: string; description: string; category: string }[]
    expect(scopes.map((s) => s.scope).sort()).toEqual([...SPEC_SCOPES].sort())
    for (const scope of scopes) {
      expect(scope.description).not.toBe('')
      expect(scope.category).not.toBe('')
    }
  })

  it('registers an app, showing its client and webhook secrets once, keeping a keyed hash and a sealed copy', async () => {
    const response = await admin('POST', '/apps', newApp({ webhook_url: 'https://hub.example.com/hooks' }))
    expect(response.statusCode).toBe(201)
    const created = response.json().data
    expect(created).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f]{24}$/),
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

    const row = await storedRow(created._id)
    expect(row?.clientSecretHash).toMatch(/^[0-9a-f]{64}$/)
    expect(JSON.stringify(row)).not.toContain(created.client_secret)
    const read = await admin('GET', `/apps/${created._id}`)
    expect(read.body).not.toContain(created.client_secret)
    expect(read.json().data).not.toHaveProperty('client_secret')
    // The webhook secret signs notifications, so it is kept encrypted rather than hashed, and not shown again.
    expect(created.webhook_secret).toMatch(/^whsec_[\w+/]{43}=$/)
    expect(row?.webhookSecretSealed).toMatch(/^v1\./)
    expect(JSON.stringify(row)).not.toContain(created.webhook_secret.slice('whsec_'.length))
    expect(read.body).not.toContain(created.webhook_secret.slice('whsec_'.length))
  })

  it('accepts http redirect URIs only on loopback addresses, and known scopes only', async () => {
    const loopback = await admin(
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
      const response = await admin('POST', '/apps', newApp(overrides))
      expect(response.json(), message).toMatchObject({ success: false, errno: 400, message })
    }
  })

  it('lists apps newest first, paginated, and reads one', async () => {
    const first = (await admin('POST', '/apps', newApp({ name: 'First' }))).json().data
    const second = (await admin('POST', '/apps', newApp({ name: 'Second' }))).json().data
    const page = await admin('GET', '/apps?limit=1')
    expect(page.json().pagination).toMatchObject({ page: 1, limit: 1 })
    expect(page.json().pagination.total).toBeGreaterThanOrEqual(2)
    expect(page.json().data.map((a: { _id: string }) => a._id)).toEqual([second._id])
    expect((await admin('GET', '/apps?limit=1&page=2')).json().data[0]._id).toBe(first._id)
    expect((await admin('GET', `/apps/${first._id}`)).json().data.name).toBe('First')
    const missing = await admin('GET', '/apps/0123456789abcdef01234567')
    expect(missing.json()).toMatchObject({ errno: 404, message: 'App not found' })
  })

  it('updates an app: activation, scopes, and clearing the webhook URL', async () => {
    const created = (
      await admin('POST', '/apps', newApp({ webhook_url: 'https://hub.example.com/h' }))
    ).json().data
    const updated = await admin('PATCH', `/apps/${created._id}`, {
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
    expect((await admin('PATCH', `/apps/${created._id}`, {})).statusCode).toBe(400)
    expect((await admin('PATCH', `/apps/${created._id}`, { scopes: ['nope'] })).json().message).toBe(
      'scopes has unknown scopes: nope',
    )
    expect((await admin('PATCH', '/apps/0123456789abcdef01234567', { active: true })).statusCode).toBe(404)
  })

  it('rotates the client secret: a new one, shown once, replaces the old hash', async () => {
    const created = (await admin('POST', '/apps', newApp())).json().data
    const before = (await storedRow(created._id))?.clientSecretHash
    const rotated = await admin('POST', `/apps/${created._id}/secret`)
    expect(rotated.statusCode).toBe(200)
    expect(rotated.json().data).toEqual({
      client_id: created._id,
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
    })
    expect(rotated.json().data.client_secret).not.toBe(created.client_secret)
    expect((await storedRow(created._id))?.clientSecretHash).not.toBe(before)
    expect((await admin('POST', '/apps/0123456789abcdef01234567/secret')).statusCode).toBe(404)
  })

  it('requires the admin token', async () => {
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
