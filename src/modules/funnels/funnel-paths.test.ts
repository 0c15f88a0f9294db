import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import { createTenant, type Tenant } from '../../../test/helpers/fixtures.js'
import {
  createFunnel,
  createThroughApi,
  funnelCall,
  uniqueBasePath,
  uniqueHostname,
} from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { copyPathCandidates } from './funnel-paths.service.js'

const create = (t: TestApp, tenant: Tenant, body: object) =>
  createFunnel(t.app, tenant, { name: 'Holder', ...body }) as Promise<{
    _id: string
    name: string
    base_path: string
  }>
const addDomain = (t: TestApp, tenant: Tenant) =>
  createThroughApi(t.app, tenant, '/domains', { name: uniqueHostname() })

const conflictBody = (path: string, holder: { _id: string; name: string }) => ({
  success: false,
  errno: 409,
  message: 'Path already in use',
  data: { available: false, path, conflicting_funnel: { _id: holder._id, name: holder.name } },
})

describe('validate-path', () => {
  test('answers 200 with the normalised path when it is free, 409 with the holder when not', async ({
    t,
    owner,
  }) => {
    const path = uniqueBasePath()
    const free = await funnelCall(t.app, owner, 'POST', '/validate-path', { path: `${path.toUpperCase()}/` })
    expect(free.statusCode).toBe(200)
    expect(free.json()).toEqual({ success: true, message: 'SUCCESS', data: { available: true, path } })
    const holder = await create(t, owner, { name: 'First', base_path: path })
    const taken = await funnelCall(t.app, owner, 'POST', '/validate-path', {
      path: `${path}/`,
      domain_id: null,
    })
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toEqual(conflictBody(path, holder))
    const itself = await funnelCall(t.app, owner, 'POST', '/validate-path', { path, funnel_id: holder._id })
    expect(itself.json().data).toEqual({ available: true, path })
  })

  test('scopes a path to its domain, or to the account’s funnels without one', async ({
    t,
    owner,
    stranger,
  }) => {
    const path = uniqueBasePath()
    const [mine, other] = [await addDomain(t, owner), await addDomain(t, owner)]
    const onDomain = await create(t, owner, { base_path: path, domain_id: mine._id })
    const check = (tenant: Tenant, body: object) =>
      funnelCall(t.app, tenant, 'POST', '/validate-path', { path, ...body }).then((r) => r.statusCode)
    expect(await check(owner, { domain_id: mine._id })).toBe(409)
    expect(await check(owner, { domain_id: other._id })).toBe(200)
    expect(await check(owner, {})).toBe(200)
    await create(t, owner, { base_path: path })
    expect(await check(owner, {})).toBe(409)
    // Another account's funnels without a domain are on its own default host.
    expect(await check(stranger, {})).toBe(200)
    const foreign = await funnelCall(t.app, stranger, 'POST', '/validate-path', { path, domain_id: mine._id })
    expect(foreign.json()).toMatchObject({
      errno: 400,
      message: 'domain_id must be a domain of this account',
    })
    expect(onDomain.base_path).toBe(path)
  })

  test('frees the path of a deleted funnel', async ({ t, owner }) => {
    const path = uniqueBasePath()
    const holder = await create(t, owner, { base_path: path })
    await funnelCall(t.app, owner, 'DELETE', `/${holder._id}`)
    expect((await funnelCall(t.app, owner, 'POST', '/validate-path', { path })).statusCode).toBe(200)
  })

  test('validates its body', async ({ t, owner }) => {
    const bad = await funnelCall(t.app, owner, 'POST', '/validate-path', { path: '/x', funnel_id: 'nope' })
    expect(bad.json()).toMatchObject({ errno: 400, message: 'Invalid funnel ID' })
    expect((await funnelCall(t.app, owner, 'POST', '/validate-path', {})).json().message).toBe(
      'path is required',
    )
  })
})

describe('path conflicts on create and update', () => {
  test('refuses a create on a taken path with 409 and the conflicting funnel', async ({ t, owner }) => {
    const path = uniqueBasePath()
    const holder = await create(t, owner, { name: 'Original', base_path: path })
    const refused = await funnelCall(t.app, owner, 'POST', '/', {
      name: 'Second',
      base_path: `${path.toUpperCase()}//`,
    })
    expect(refused.statusCode).toBe(409)
    expect(refused.json()).toEqual(conflictBody(path, holder))
    const listed = await funnelCall(t.app, owner, 'GET', '/?search=Second')
    expect(listed.json().pagination.total).toBe(0)
  })

  test('refuses an update onto a taken path or onto a domain where the path is taken', async ({
    t,
    owner,
  }) => {
    const domain = await addDomain(t, owner)
    const path = uniqueBasePath()
    const onDomain = await create(t, owner, { name: 'On domain', base_path: path, domain_id: domain._id })
    const held = await create(t, owner, { name: 'Held', base_path: uniqueBasePath() })
    const mover = await create(t, owner, { name: 'Mover', base_path: path })
    const ontoDomain = await funnelCall(t.app, owner, 'PUT', `/${mover._id}`, { domain_id: domain._id })
    expect(ontoDomain.json()).toEqual(conflictBody(path, onDomain))
    const ontoPath = await funnelCall(t.app, owner, 'PUT', `/${mover._id}`, {
      base_path: held.base_path,
      name: 'x',
    })
    expect(ontoPath.statusCode).toBe(409)
    expect(ontoPath.json()).toEqual(conflictBody(held.base_path, held))
    const unchanged = (await funnelCall(t.app, owner, 'GET', `/${mover._id}`)).json().data
    expect(unchanged).toMatchObject({ name: 'Mover', base_path: path, domain_id: null })
    // Its own path, sent again, is no conflict.
    const same = await funnelCall(t.app, owner, 'PUT', `/${mover._id}`, { base_path: `${path}/` })
    expect(same.statusCode).toBe(200)
  })

  test('lets exactly one of several concurrent creates of the same path win; the others get the 409', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    const path = uniqueBasePath()
    const attempts = await Promise.all(
      Array.from({ length: 5 }, (_, i) =>
        funnelCall(t.app, tenant, 'POST', '/', {
          name: `Racer ${i}`,
          base_path: path,
          steps: [{ name: 'S', path: 's' }],
        }),
      ),
    )
    const won = attempts.filter((r) => r.statusCode === 201)
    const lost = attempts.filter((r) => r.statusCode === 409)
    expect(won).toHaveLength(1)
    expect(lost).toHaveLength(4)
    const winner = won[0]?.json().data
    for (const refusal of lost) expect(refusal.json()).toEqual(conflictBody(path, winner))
    const listed = await funnelCall(t.app, tenant, 'GET', '/?search=Racer')
    expect(listed.json().pagination.total).toBe(1)
  })
})

describe('copy path candidates', () => {
  test('keep the path, then append -copy, -copy-2, ...; the root path becomes /copy', () => {
    expect(copyPathCandidates('/sale', 0, 4)).toEqual(['/sale', '/sale-copy', '/sale-copy-2', '/sale-copy-3'])
    expect(copyPathCandidates('/', 1, 2)).toEqual(['/copy', '/copy-2'])
  })
})
