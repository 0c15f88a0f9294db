import { describe, expect } from 'vitest'
import { bearer } from '../../../test/helpers/app.js'
import { anId, createTenant, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  createFunnel,
  createThroughApi,
  FUNNELS,
  funnelCall,
  uniqueBasePath,
  uniqueHostname,
} from '../../../test/helpers/funnels.js'
import { createUser, obtainTokens } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { FIELD_COUNT_MAX, FIELD_KEY_MAX_LENGTH } from '../../platform/http/schemas.js'

describe('creating and reading funnels', () => {
  test('creates a funnel with its steps, a normalised path, its domain and tags, and reads it back', async ({
    t,
    owner,
  }) => {
    const domain = await createThroughApi(t.app, owner, '/domains', {
      name: uniqueHostname(),
      ssl_enabled: true,
    })
    const tag = await createThroughApi(t.app, owner, '/tags', { name: 'Launch' })
    const created = await funnelCall(t.app, owner, 'POST', '/', {
      name: 'Launch',
      domain_id: domain._id,
      base_path: 'Launch//Week/',
      status: 'active',
      favicon: 'https://cdn.example.com/favicon.ico',
      tags: [tag._id],
      steps: [
        { name: 'Thanks', path: 'Thank-You', type: 'page', order: 1 },
        { name: 'Opt-in', path: '/optin/', type: 'page', order: 0 },
        { name: 'Out', path: 'out', type: 'redirect', order: 2 },
      ],
      header_tracking_code: '<script>h()</script>',
      footer_tracking_code: '<script>f()</script>',
      live_chat_widget: { enabled: true, provider: 'crisp', config: { id: 'abc' } },
    })
    expect(created.statusCode).toBe(201)
    const funnel = created.json().data
    expect(created.json()).toMatchObject({ success: true, message: 'SUCCESS' })
    expect(funnel).toMatchObject({
      _id: anId,
      account_id: owner.accountId,
      name: 'Launch',
      base_path: '/launch/week',
      status: 'active',
      domain_id: domain._id,
      domain: { _id: domain._id, name: domain.name, ssl_enabled: true },
      tags: [{ _id: tag._id, name: 'Launch' }],
      favicon: 'https://cdn.example.com/favicon.ico',
      header_tracking_code: '<script>h()</script>',
      footer_tracking_code: '<script>f()</script>',
      live_chat_widget: { enabled: true, provider: 'crisp', config: { id: 'abc' } },
      deleted: false,
      updated_by: owner.userId,
    })
    expect(
      funnel.steps.map((s: { name: string; path: string; order: number }) => [s.name, s.path, s.order]),
    ).toEqual([
      ['Opt-in', '/optin', 0],
      ['Thanks', '/thank-you', 1],
      ['Out', '/out', 2],
    ])
    expect(funnel.steps[0]).toEqual({
      _id: anId,
      name: 'Opt-in',
      path: '/optin',
      type: 'page',
      order: 0,
      seo: {},
    })
    const read = await funnelCall(t.app, owner, 'GET', `/${funnel._id}`)
    expect(read.json()).toEqual({ success: true, message: 'SUCCESS', data: funnel })
  })

  test('defaults: status draft, no domain, the path from the name, steps in list order', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const funnel = await createFunnel(t.app, tenant, {
      name: 'Black Friday!',
      base_path: undefined,
      steps: [
        { name: 'A', path: 'a' },
        { name: 'B', path: 'b' },
      ],
    })
    expect(funnel).toMatchObject({
      base_path: '/black-friday',
      status: 'draft',
      domain_id: null,
      domain: null,
      tags: [],
      favicon: null,
      live_chat_widget: null,
      category: null,
    })
    expect(funnel.steps.map((s: { order: number; type: string }) => [s.order, s.type])).toEqual([
      [0, 'page'],
      [1, 'page'],
    ])
  })

  test('refuses a domain or tags of another account, and repeated step paths, naming the field', async ({
    t,
    owner,
    stranger,
  }) => {
    const foreignDomain = await createThroughApi(t.app, stranger, '/domains', { name: uniqueHostname() })
    const foreignTag = await createThroughApi(t.app, stranger, '/tags', { name: 'theirs' })
    const widget = { enabled: true, provider: 'crisp' }
    const manyKeys = (count: number) =>
      Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}`, i]))
    const cases = [
      [{ domain_id: foreignDomain._id }, 'domain_id must be a domain of this account'],
      [{ tags: [foreignTag._id] }, 'tags must be tags of this account'],
      [
        {
          steps: [
            { name: 'A', path: '/Same' },
            { name: 'B', path: 'same/' },
          ],
        },
        'steps must have different paths',
      ],
      [{ name: '' }, 'name must not be empty'],
      [{ status: 'archived' }, 'status must be one of: active, inactive, draft'],
      [{ steps: [{ name: 'A', path: 'a', type: 'popup' }] }, 'steps[0].type must be one of: page, redirect'],
      // The widget's own settings are any JSON, but their keys and their count are bounded.
      [
        { live_chat_widget: { ...widget, config: { ['k'.repeat(FIELD_KEY_MAX_LENGTH + 1)]: 1 } } },
        `live_chat_widget.config must be at most ${FIELD_KEY_MAX_LENGTH} characters long`,
      ],
      [
        { live_chat_widget: { ...widget, config: manyKeys(FIELD_COUNT_MAX + 1) } },
        `live_chat_widget.config must NOT have more than ${FIELD_COUNT_MAX} properties`,
      ],
    ] as const
    for (const [body, message] of cases) {
      const refused = await funnelCall(t.app, owner, 'POST', '/', {
        name: 'X',
        base_path: uniqueBasePath(),
        ...body,
      })
      expect(refused.json(), message).toMatchObject({ success: false, errno: 400, message })
    }
  })

  test('answers the spec errors for a malformed, unknown or foreign funnel id', async ({
    t,
    owner,
    stranger,
  }) => {
    const funnel = await createFunnel(t.app, owner)
    expect((await funnelCall(t.app, owner, 'GET', '/not-an-id')).json()).toMatchObject({
      errno: 400,
      message: 'Invalid funnel ID',
    })
    expect((await funnelCall(t.app, owner, 'GET', `/${newId()}`)).json()).toMatchObject({
      errno: 404,
      message: 'Funnel not found',
    })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/${funnel._id}` },
      owner,
      stranger,
    )
    expect((await t.app.inject({ url: `${FUNNELS}/${funnel._id}` })).statusCode).toBe(401)
  })
})

describe('listing funnels', () => {
  test('filters by name, status, tags and domain, newest change first, 10 a page by default', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const other = await createTenant(t.app)
    const domain = await createThroughApi(t.app, tenant, '/domains', { name: uniqueHostname() })
    const [red, blue] = [
      await createThroughApi(t.app, tenant, '/tags', { name: 'red' }),
      await createThroughApi(t.app, tenant, '/tags', { name: 'blue' }),
    ]
    const alpha = await createFunnel(t.app, tenant, {
      name: 'Alpha offer',
      status: 'active',
      tags: [red._id],
      steps: [{ name: 'S', path: 's' }],
    })
    const beta = await createFunnel(t.app, tenant, {
      name: 'Beta offer',
      status: 'inactive',
      tags: [blue._id],
      domain_id: domain._id,
    })
    const gamma = await createFunnel(t.app, tenant, {
      name: 'Gamma',
      status: 'draft',
      tags: [red._id, blue._id],
    })
    for (let i = 0; i < 9; i++) await createFunnel(t.app, tenant, { name: `Filler ${i}`, status: 'draft' })
    await createFunnel(t.app, other, { name: 'Alpha offer' })

    const names = async (query: string) =>
      (await funnelCall(t.app, tenant, 'GET', `/?${query}`)).json().data.map((f: { name: string }) => f.name)
    const first = (await funnelCall(t.app, tenant, 'GET', '')).json()
    expect(first.pagination).toEqual({ total: 12, page: 1, limit: 10, pages: 2 })
    expect(first.data).toHaveLength(10)
    expect(first.data[0].name).toBe('Filler 8')
    expect(
      (await funnelCall(t.app, tenant, 'GET', '/?page=2')).json().data.map((f: { name: string }) => f.name),
    ).toEqual(['Beta offer', 'Alpha offer'])
    expect(await names('search=OFFER')).toEqual(['Beta offer', 'Alpha offer'])
    expect(await names('status=inactive')).toEqual(['Beta offer'])
    expect(await names(`tags=${red._id}`)).toEqual(['Gamma', 'Alpha offer'])
    expect(await names(`tags=${red._id},${blue._id}&search=a`)).toEqual([
      'Gamma',
      'Beta offer',
      'Alpha offer',
    ])
    expect(await names('domain_connected=true')).toEqual(['Beta offer'])
    expect(await names('domain_connected=false&search=offer')).toEqual(['Alpha offer'])
    const listed = (await funnelCall(t.app, tenant, 'GET', '/?search=alpha')).json().data[0]
    expect(listed).toMatchObject({
      _id: alpha._id,
      tags: [red._id],
      steps: [{ name: 'S', path: '/s', type: 'page', order: 0 }],
    })
    expect(listed.steps[0]).not.toHaveProperty('seo')
    expect(gamma.tags).toHaveLength(2)
    expect(beta.domain_id).toBe(domain._id)
    expect((await funnelCall(t.app, tenant, 'GET', '/?tags=nope')).json()).toMatchObject({
      errno: 400,
      message: 'tags must be comma-separated tag ids',
    })
    expect((await funnelCall(t.app, tenant, 'GET', '/?limit=0')).json()).toMatchObject({
      errno: 400,
      message: 'limit must be >= 1',
    })
  })

  test('offers the statuses and the tags with counts, narrowed by status and tags', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const [red, blue] = [
      await createThroughApi(t.app, tenant, '/tags', { name: 'red' }),
      await createThroughApi(t.app, tenant, '/tags', { name: 'blue' }),
    ]
    await createFunnel(t.app, tenant, { status: 'active', tags: [red._id, blue._id] })
    await createFunnel(t.app, tenant, { status: 'draft', tags: [red._id] })
    const filters = await funnelCall(t.app, tenant, 'GET', '/filters')
    expect(filters.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: {
        statuses: ['active', 'inactive', 'draft'],
        tags: [
          { _id: blue._id, name: 'blue', count: 1 },
          { _id: red._id, name: 'red', count: 2 },
        ],
      },
    })
    const active = (await funnelCall(t.app, tenant, 'GET', '/filters?status=draft')).json().data.tags
    expect(active).toEqual([
      { _id: blue._id, name: 'blue', count: 0 },
      { _id: red._id, name: 'red', count: 1 },
    ])
    const onlyRed = (await funnelCall(t.app, tenant, 'GET', `/filters?tags=${red._id}`)).json().data.tags
    expect(onlyRed).toEqual([{ _id: red._id, name: 'red', count: 2 }])
    const stranger = await createTenant(t.app)
    expect((await funnelCall(t.app, stranger, 'GET', `/filters?tags=${red._id}`)).json().data.tags).toEqual(
      [],
    )
  })
})

describe('third-party apps', () => {
  test('read funnels with sites.read and need sites.write to change them', async ({ t, oauthApp }) => {
    const tenant = await createTenant(t.app)
    const funnel = await createFunnel(t.app, tenant)
    const email = `app-user-${newId()}@example.com`
    await createUser(t.app, email, [tenant.accountId])
    const { access_token } = await obtainTokens(t.app, oauthApp, email, 'sites.read')
    const headers = bearer(access_token)
    const read = await t.app.inject({ url: `${FUNNELS}/${funnel._id}`, headers })
    expect(read.statusCode).toBe(200)
    const write = await t.app.inject({ method: 'DELETE', url: `${FUNNELS}/${funnel._id}`, headers })
    expect(write.statusCode).toBe(403)
    expect(write.headers['www-authenticate']).toContain('scope="sites.write"')
  })
})
