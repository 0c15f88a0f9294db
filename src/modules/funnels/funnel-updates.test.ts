import { describe, expect } from 'vitest'
import { adminHeaders } from '../../../test/helpers/app.js'
import { addUser, createTenant, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  cacheProbe,
  createFunnel,
  createThroughApi,
  FUNNELS,
  funnelCall,
  seedFunnel,
  uniqueHostname,
} from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { ADMIN_PERMISSION_REQUIRED, requireStep } from './funnel-access.service.js'

describe('updating funnels', () => {
  test('changes the fields given, records who and when, and forgets the cached steps', async ({
    t,
    owner,
  }) => {
    const funnel = await createFunnel(t.app, owner, { status: 'draft', favicon: 'https://a/f.ico' })
    const colleague = await addUser(t.app, owner.accountId, 'Colleague')
    const domain = await createThroughApi(t.app, owner, '/domains', { name: uniqueHostname() })
    const tag = await createThroughApi(t.app, owner, '/tags', { name: 'updated' })
    const forgotten = cacheProbe(t.app, funnel._id)
    const updated = await funnelCall(t.app, colleague, 'PUT', `/${funnel._id}`, {
      name: 'Renamed',
      status: 'active',
      favicon: null,
      tags: [tag._id],
      header_tracking_code: 'h',
      footer_tracking_code: 'f',
      live_chat_widget: { enabled: false, provider: 'intercom', config: {} },
      domain_id: domain._id,
      conflicts: true,
    })
    expect(updated.statusCode).toBe(200)
    expect(updated.json().data).toMatchObject({
      name: 'Renamed',
      status: 'active',
      favicon: null,
      tags: [{ _id: tag._id, name: 'updated' }],
      header_tracking_code: 'h',
      footer_tracking_code: 'f',
      live_chat_widget: { enabled: false, provider: 'intercom', config: {} },
      domain: { _id: domain._id },
      base_path: funnel.base_path,
      updated_by: colleague.userId,
    })
    expect(Date.parse(updated.json().data.updated_at)).toBeGreaterThan(Date.parse(funnel.updated_at))
    expect(forgotten()).toBe(true)
    const cleared = await funnelCall(t.app, owner, 'PUT', `/${funnel._id}`, { domain_id: null, tags: [] })
    expect(cleared.json().data).toMatchObject({
      name: 'Renamed',
      domain: null,
      tags: [],
      updated_by: owner.userId,
    })
  })

  test('moves a funnel from any status to any other (the state table leaves them open)', async ({
    t,
    owner,
  }) => {
    const funnel = await createFunnel(t.app, owner, { status: 'draft' })
    for (const status of ['active', 'inactive', 'draft', 'inactive', 'active', 'draft']) {
      const moved = await funnelCall(t.app, owner, 'PUT', `/${funnel._id}`, { status })
      expect(moved.statusCode).toBe(200)
      expect(moved.json().data.status).toBe(status)
    }
    const unknown = await funnelCall(t.app, owner, 'PUT', `/${funnel._id}`, { status: 'archived' })
    expect(unknown.statusCode).toBe(400)
    expect(unknown.json().message).toBe('status must be one of: active, inactive, draft')
  })

  test('changes the category only for a user with the funnel-template admin permission', async ({ t }) => {
    const tenant = await createTenant(t.app)
    const funnel = await createFunnel(t.app, tenant)
    const category = newId()
    const refused = await funnelCall(t.app, tenant, 'PUT', `/${funnel._id}`, {
      category,
      name: 'not applied',
    })
    expect(refused.statusCode).toBe(403)
    expect(refused.json()).toMatchObject({ success: false, errno: 403, message: ADMIN_PERMISSION_REQUIRED })
    expect((await funnelCall(t.app, tenant, 'GET', `/${funnel._id}`)).json().data.name).toBe('Spring sale')
    // Sending the category it already has changes nothing, so it needs no permission.
    const same = await funnelCall(t.app, tenant, 'PUT', `/${funnel._id}`, { category: null })
    expect(same.statusCode).toBe(200)
    await t.app.inject({
      method: 'PUT',
      url: `/v1/admin/users/${tenant.userId}/permissions`,
      headers: adminHeaders,
      payload: { permissions: ['funnel_templates:admin'] },
    })
    const allowed = await funnelCall(t.app, tenant, 'PUT', `/${funnel._id}`, { category })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.json().data.category).toBe(category)
  })

  test('refuses foreign domains and tags, bad fields, and another account’s funnel', async ({
    t,
    owner,
    stranger,
  }) => {
    const funnel = await createFunnel(t.app, owner)
    const foreignTag = await createThroughApi(t.app, stranger, '/tags', { name: 'foreign' })
    expect(
      (await funnelCall(t.app, owner, 'PUT', `/${funnel._id}`, { tags: [foreignTag._id] })).json(),
    ).toMatchObject({ errno: 400, message: 'tags must be tags of this account' })
    expect((await funnelCall(t.app, owner, 'PUT', `/${funnel._id}`, { status: 'gone' })).json().errno).toBe(
      400,
    )
    expect((await funnelCall(t.app, owner, 'PUT', '/bad-id', { name: 'x' })).json()).toMatchObject({
      errno: 400,
      message: 'Invalid funnel ID',
    })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PUT', url: `${FUNNELS}/${funnel._id}`, payload: { name: 'Mine' } },
      owner,
      stranger,
    )
  })
})

describe('deleting funnels', () => {
  test('soft-deletes: the spec answer, then 404 everywhere, steps included, and the path is free again', async ({
    t,
    owner,
    stranger,
  }) => {
    const funnel = await createFunnel(t.app, owner, { steps: [{ name: 'S', path: 's' }] })
    const forgottenOnDelete = cacheProbe(t.app, funnel._id)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/${funnel._id}` },
      owner,
      stranger,
    )
    expect((await funnelCall(t.app, stranger, 'DELETE', `/${funnel._id}`)).statusCode).toBe(404)
    const deleted = await funnelCall(t.app, owner, 'DELETE', `/${funnel._id}`)
    expect(deleted.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: { _id: funnel._id, deleted: true, deleted_at: expect.any(String) },
    })
    expect(forgottenOnDelete()).toBe(true)
    for (const [method, path, payload] of [
      ['GET', `/${funnel._id}`, undefined],
      ['PUT', `/${funnel._id}`, { name: 'x' }],
      ['DELETE', `/${funnel._id}`, undefined],
      ['POST', `/${funnel._id}/duplicate`, undefined],
    ] as const) {
      expect(
        (await funnelCall(t.app, owner, method, path, payload)).json(),
        `${method} ${path}`,
      ).toMatchObject({ errno: 404, message: 'Funnel not found' })
    }
    const listed = (
      await funnelCall(t.app, owner, 'GET', `/?search=${encodeURIComponent(funnel.name)}&limit=100`)
    ).json().data
    expect(listed.map((f: { _id: string }) => f._id)).not.toContain(funnel._id)
    await expect(requireStep(t.app.platform.db, owner.accountId, funnel.steps[0]._id)).rejects.toMatchObject({
      statusCode: 404,
    })
    const reused = await funnelCall(t.app, owner, 'POST', '/', { name: 'Again', base_path: funnel.base_path })
    expect(reused.statusCode).toBe(201)
  })

  test('hides a seeded funnel’s steps after delete', async ({ t, owner }) => {
    const seeded = await seedFunnel(t.app, owner, { steps: [{ path: 'one' }] })
    await funnelCall(t.app, owner, 'DELETE', `/${seeded.funnelId}`)
    expect((await funnelCall(t.app, owner, 'GET', `/${seeded.funnelId}`)).statusCode).toBe(404)
  })
})
