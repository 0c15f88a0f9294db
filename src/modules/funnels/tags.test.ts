import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import {
  anId,
  createTenant,
  expectHiddenFromOtherAccounts,
  type Tenant,
} from '../../../test/helpers/fixtures.js'
import {
  cacheProbe,
  createFunnel,
  createThroughApi,
  FUNNELS,
  funnelCall,
} from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'

const addTag = (t: TestApp, tenant: Tenant, name: string) =>
  createThroughApi(t.app, tenant, '/tags', { name })
const addFunnel = (t: TestApp, tenant: Tenant, tags: string[]) => createFunnel(t.app, tenant, { tags })

describe('funnel tags', () => {
  test('adds a tag, and returns the same tag for the same name in any case', async ({ t, owner }) => {
    const created = await funnelCall(t.app, owner, 'POST', '/tags', { name: ' Spring ' })
    expect(created.statusCode).toBe(201)
    expect(created.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: { _id: anId, name: 'Spring', count: 0 },
    })
    const again = await funnelCall(t.app, owner, 'POST', '/tags', { name: 'SPRING' })
    expect(again.statusCode).toBe(200)
    expect(again.json().data).toEqual(created.json().data)
    expect((await funnelCall(t.app, owner, 'POST', '/tags', { name: '  ' })).json()).toMatchObject({
      errno: 400,
      message: 'name must not be empty',
    })
    expect((await funnelCall(t.app, owner, 'POST', '/tags', {})).json().message).toBe('name is required')
  })

  test('lists the account tags by name with the count of live funnels carrying each', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const other = await createTenant(t.app)
    const sale = await addTag(t, tenant, 'sale')
    const autumn = await addTag(t, tenant, 'Autumn')
    await addTag(t, tenant, 'unused')
    await addTag(t, other, 'foreign')
    await addFunnel(t, tenant, [sale._id, autumn._id])
    await addFunnel(t, tenant, [sale._id])
    const gone = await addFunnel(t, tenant, [sale._id])
    await funnelCall(t.app, tenant, 'DELETE', `/${gone._id}`)
    const list = await funnelCall(t.app, tenant, 'GET', '/tags')
    expect(list.json().data).toEqual([
      { _id: autumn._id, name: 'Autumn', count: 1 },
      { _id: sale._id, name: 'sale', count: 2 },
      { _id: expect.any(String), name: 'unused', count: 0 },
    ])
    expect(list.json().pagination).toEqual({ total: 3, page: 1, limit: 50, pages: 1 })
    const page = await funnelCall(t.app, tenant, 'GET', '/tags?limit=1&page=2&search=A')
    expect(page.json()).toMatchObject({
      data: [{ name: 'sale' }],
      pagination: { total: 2, page: 2, limit: 1, pages: 2 },
    })
  })

  test('deletes a tag: its funnels lose it and are forgotten by the step cache; hidden from others', async ({
    t,
    owner,
    stranger,
  }) => {
    const tag = await addTag(t, owner, 'to-delete')
    const funnel = await addFunnel(t, owner, [tag._id])
    const forgotten = cacheProbe(t.app, funnel._id)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'DELETE', url: `${FUNNELS}/tags/${tag._id}` },
      owner,
      stranger,
    )
    expect(forgotten()).toBe(true)
    expect((await funnelCall(t.app, owner, 'GET', `/${funnel._id}`)).json().data.tags).toEqual([])
    const again = await funnelCall(t.app, owner, 'DELETE', `/tags/${tag._id}`)
    expect(again.json()).toMatchObject({ errno: 404, message: 'Tag not found' })
  })

  test('keeps tags to their account', async ({ t, owner, stranger }) => {
    const mine = await addTag(t, owner, 'private-tag')
    const list = await funnelCall(t.app, stranger, 'GET', '/tags?search=private-tag')
    expect(list.json().pagination.total).toBe(0)
    // The same name in another account is another tag.
    const theirs = await funnelCall(t.app, stranger, 'POST', '/tags', { name: 'private-tag' })
    expect(theirs.statusCode).toBe(201)
    expect(theirs.json().data._id).not.toBe(mine._id)
  })

  test('a tag deleted while a funnel takes it: the funnel gets it first or a 400, never a 5xx', async ({
    t,
  }) => {
    const tenant = await createTenant(t.app)
    for (let round = 0; round < 5; round++) {
      const tag = await addTag(t, tenant, `racing-${round}`)
      const [created, deleted] = await Promise.all([
        funnelCall(t.app, tenant, 'POST', '/', {
          name: 'Racing',
          base_path: `/racing-${round}`,
          tags: [tag._id],
        }),
        funnelCall(t.app, tenant, 'DELETE', `/tags/${tag._id}`),
      ])
      expect(deleted.statusCode).toBe(200)
      expect([201, 400], created.body).toContain(created.statusCode)
      if (created.statusCode === 201) {
        const funnel = await funnelCall(t.app, tenant, 'GET', `/${created.json().data._id}`)
        expect(funnel.json().data.tags).toEqual([])
      }
    }
  })
})
