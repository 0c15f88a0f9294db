import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { createFunnel, FUNNELS, funnelCall, uniqueHostname } from '../../../test/helpers/funnels.js'
import { removedInPlace } from '../../../test/helpers/removed-in-place.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { SUB_ACCOUNT_NOT_FOUND } from './funnel-duplicate.service.js'
import { funnelStepComponents, funnelSteps } from './tables.js'

interface Funnel {
  _id: string
  name: string
  base_path: string
  account_id: string
  steps: { _id: string; name: string; path: string; order: number }[]
}

async function createWithContent(t: TestApp, tenant: Tenant, body: object = {}): Promise<Funnel> {
  const funnel: Funnel = await createFunnel(t.app, tenant, {
    name: 'Webinar',
    status: 'active',
    header_tracking_code: 'h',
    steps: [
      { name: 'Register', path: 'register' },
      { name: 'Watch', path: 'watch' },
    ],
    ...body,
  })
  const { db } = t.app.platform
  for (const step of funnel.steps) {
    await db
      .update(funnelSteps)
      .set({ html: `<p>${step.name}</p>`, seo: { title: step.name }, css: 'p{}', checksum: 'synced' })
      .where(eq(funnelSteps.id, step._id))
    await db.insert(funnelStepComponents).values({
      accountId: tenant.accountId,
      stepId: step._id,
      funnelId: funnel._id,
      components: {
        version: '2',
        components: [{ id: 'c1', type: 'text', settings: {}, content: { text: step.name } }],
      },
      checksum: `sum-${step.name}`,
    })
  }
  return funnel
}

const duplicate = (t: TestApp, tenant: Tenant, funnelId: string, query = '') =>
  funnelCall(t.app, tenant, 'POST', `/${funnelId}/duplicate${query}`)

async function stepsWithComponents(t: TestApp, funnelId: string) {
  const { db } = t.app.platform
  return db
    .select({
      accountId: funnelSteps.accountId,
      name: funnelSteps.name,
      path: funnelSteps.path,
      order: funnelSteps.order,
      html: funnelSteps.html,
      seo: funnelSteps.seo,
      css: funnelSteps.css,
      checksum: funnelSteps.checksum,
      components: funnelStepComponents.components,
      componentsChecksum: funnelStepComponents.checksum,
      componentsFunnelId: funnelStepComponents.funnelId,
      componentsAccountId: funnelStepComponents.accountId,
    })
    .from(funnelSteps)
    .leftJoin(funnelStepComponents, eq(funnelStepComponents.stepId, funnelSteps.id))
    .where(eq(funnelSteps.funnelId, funnelId))
    .orderBy(funnelSteps.order)
}

describe('duplicating a funnel', () => {
  test('copies it inactive, named (Copy), without domain, with its steps, components and tags', async ({
    t,
    owner,
  }) => {
    const tag = (await funnelCall(t.app, owner, 'POST', '/tags', { name: 'dup' })).json().data
    const source = await createWithContent(t, owner, { tags: [tag._id] })
    const copied = await duplicate(t, owner, source._id)
    expect(copied.statusCode).toBe(201)
    const copy = copied.json().data
    expect(copied.json()).toMatchObject({ success: true, message: 'SUCCESS' })
    expect(copy).toMatchObject({
      name: 'Webinar (Copy)',
      status: 'inactive',
      domain_id: null,
      domain: null,
      base_path: `${source.base_path}-copy`,
      account_id: owner.accountId,
      header_tracking_code: 'h',
      tags: [{ _id: tag._id, name: 'dup' }],
      updated_by: owner.userId,
    })
    expect(copy._id).not.toBe(source._id)
    expect(
      copy.steps.map((s: { name: string; path: string; order: number }) => [s.name, s.path, s.order]),
    ).toEqual([
      ['Register', '/register', 0],
      ['Watch', '/watch', 1],
    ])
    expect(copy.steps.map((s: { _id: string }) => s._id)).not.toContain(source.steps[0]?._id)
    const copiedSteps = await stepsWithComponents(t, copy._id)
    expect(copiedSteps).toEqual(
      (await stepsWithComponents(t, source._id)).map((step) => ({
        ...step,
        checksum: null,
        componentsFunnelId: copy._id,
      })),
    )
    expect(copiedSteps[0]).toMatchObject({ html: '<p>Register</p>', componentsChecksum: 'sum-Register' })
    // The source is untouched.
    expect((await funnelCall(t.app, owner, 'GET', `/${source._id}`)).json().data).toMatchObject({
      name: 'Webinar',
      status: 'active',
    })
  })

  test('appends -copy, then -copy-2, -copy-3 while the path is taken, and keeps a free one', async ({
    t,
    owner,
  }) => {
    const source = await createWithContent(t, owner)
    const paths = []
    for (let i = 0; i < 3; i++) paths.push((await duplicate(t, owner, source._id)).json().data.base_path)
    expect(paths).toEqual([
      `${source.base_path}-copy`,
      `${source.base_path}-copy-2`,
      `${source.base_path}-copy-3`,
    ])
    const domain = (await funnelCall(t.app, owner, 'POST', '/domains', { name: uniqueHostname() })).json()
      .data
    const onDomain = await createWithContent(t, owner, { domain_id: domain._id })
    // The copy has no domain: on the default host, the path is free.
    expect((await duplicate(t, owner, onDomain._id)).json().data.base_path).toBe(onDomain.base_path)
  })

  test('copies into a sub-account of the caller’s account, without the tags of the parent', async ({
    t,
    owner,
    subAccount,
  }) => {
    const tag = (await funnelCall(t.app, owner, 'POST', '/tags', { name: 'parent-only' })).json().data
    const source = await createWithContent(t, owner, { tags: [tag._id] })
    const copied = await duplicate(t, owner, source._id, `?subaccountid=${subAccount.accountId}`)
    expect(copied.statusCode).toBe(201)
    const copy = copied.json().data
    expect(copy).toMatchObject({
      account_id: subAccount.accountId,
      name: 'Webinar (Copy)',
      status: 'inactive',
      base_path: source.base_path,
      tags: [],
    })
    const read = await funnelCall(t.app, subAccount, 'GET', `/${copy._id}`)
    expect(read.json().data).toEqual(copy)
    expect((await funnelCall(t.app, owner, 'GET', `/${copy._id}`)).statusCode).toBe(404)
    const steps = await stepsWithComponents(t, copy._id)
    expect(steps).toHaveLength(2)
    for (const step of steps) {
      expect(step).toMatchObject({
        accountId: subAccount.accountId,
        componentsAccountId: subAccount.accountId,
      })
    }
  })

  test('refuses a subaccountid that is not a sub-account of the caller’s account with 404', async ({
    t,
    owner,
    stranger,
    subAccount,
  }) => {
    const source = await createWithContent(t, owner)
    for (const accountId of [stranger.accountId, owner.accountId, newId()]) {
      const refused = await duplicate(t, owner, source._id, `?subaccountid=${accountId}`)
      expect(refused.json(), accountId).toMatchObject({
        success: false,
        errno: 404,
        message: SUB_ACCOUNT_NOT_FOUND,
      })
    }
    // A sub-account cannot copy into its parent either.
    const own = await createWithContent(t, subAccount)
    const upwards = await duplicate(t, subAccount, own._id, `?subaccountid=${owner.accountId}`)
    expect(upwards.statusCode).toBe(404)
    const malformed = await duplicate(t, owner, source._id, '?subaccountid=nope')
    expect(malformed.json()).toMatchObject({
      errno: 400,
      message: 'subaccountid must be a 24-character hex id',
    })
  })

  test('refuses a removed or a suspended sub-account as an unknown one', async ({ t, owner }) => {
    const source = await createWithContent(t, owner)
    const sub = () => createTenant(t.app, { name: 'Client', parent_account: owner.accountId })
    const [removed, suspended] = [await sub(), await sub()]
    await removedInPlace(t, removed.accountId)
    const suspension = await t.app.inject({
      method: 'PATCH',
      url: `/v1/admin/accounts/${suspended.accountId}`,
      headers: adminHeaders,
      payload: { status: 'suspended' },
    })
    expect(suspension.statusCode).toBe(200)

    const answerFor = async (accountId: string) => {
      const response = await duplicate(t, owner, source._id, `?subaccountid=${accountId}`)
      return { status: response.statusCode, body: response.json() }
    }
    const unknown = await answerFor(newId())
    expect(unknown.status).toBe(404)
    for (const accountId of [removed.accountId, suspended.accountId])
      expect(await answerFor(accountId), accountId).toEqual(unknown)
  })

  test('is refused for another account’s funnel, and a malformed id', async ({ t, owner, stranger }) => {
    const source = await createWithContent(t, owner)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'POST', url: `${FUNNELS}/${source._id}/duplicate` },
      owner,
      stranger,
    )
    expect((await duplicate(t, owner, 'x')).json()).toMatchObject({
      errno: 400,
      message: 'Invalid funnel ID',
    })
  })

  test('gives concurrent copies different paths', async ({ t, owner }) => {
    const source = await createWithContent(t, owner)
    const copies = await Promise.all([1, 2, 3].map(() => duplicate(t, owner, source._id)))
    expect(copies.map((r) => r.statusCode)).toEqual([201, 201, 201])
    const paths = copies.map((r) => r.json().data.base_path).sort()
    expect(paths).toEqual([
      `${source.base_path}-copy`,
      `${source.base_path}-copy-2`,
      `${source.base_path}-copy-3`,
    ])
  })
})
