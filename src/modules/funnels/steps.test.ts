import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { bearer } from '../../../test/helpers/app.js'
import { anId, expectHiddenFromOtherAccounts } from '../../../test/helpers/fixtures.js'
import {
  builderDocument,
  cacheProbe,
  FUNNELS,
  funnelCall,
  seedFunnel,
  softDeleteFunnel,
} from '../../../test/helpers/funnels.js'
import { createUser, obtainTokens, registerApp } from '../../../test/helpers/oauth.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { funnelSteps } from './tables.js'

describe('funnel steps', () => {
  test('reads a step with html, seo, tracking code, css and funnel_id; hidden from other accounts', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: [{ name: 'Landing', html: '<h1>Hi</h1>' }],
    })
    const stepId = stepIds[0] as string
    await t.app.platform.db
      .update(funnelSteps)
      .set({ seo: { title: 'Hi' }, trackingCode: { header: '<script>h</script>' }, css: 'h1{}' })
      .where(eq(funnelSteps.id, stepId))
    const response = await funnelCall(t.app, owner, 'GET', `/${funnelId}/steps/${stepId}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toMatchObject({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: stepId,
        funnel_id: funnelId,
        name: 'Landing',
        path: '/step-1',
        type: 'page',
        order: 0,
        html: '<h1>Hi</h1>',
        seo: { title: 'Hi' },
        tracking_code: { header: '<script>h</script>' },
        css: 'h1{}',
        created_at: expect.any(String),
        updated_at: expect.any(String),
      },
    })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'GET', url: `${FUNNELS}/${funnelId}/steps/${stepId}` },
      owner,
      stranger,
    )
  })

  test('answers the spec messages for a malformed or unknown funnel, and 404 for a step of another funnel', async ({
    t,
    owner,
  }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const other = await seedFunnel(t.app, owner)
    const malformed = await funnelCall(t.app, owner, 'GET', `/not-an-id/steps/${stepIds[0]}`)
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json()).toMatchObject({ success: false, errno: 400, message: 'Invalid funnel ID' })
    const unknown = await funnelCall(t.app, owner, 'GET', `/${newId()}/steps/${stepIds[0]}`)
    expect(unknown.json()).toMatchObject({ errno: 404, message: 'Funnel not found' })
    const elsewhere = await funnelCall(t.app, owner, 'GET', `/${other.funnelId}/steps/${stepIds[0]}`)
    expect(elsewhere.json()).toMatchObject({ errno: 404, message: 'Step not found' })
    expect(
      (await funnelCall(t.app, owner, 'POST', '/nope/steps', { stepInfo: { name: 'A', path: '/a' } })).json(),
    ).toMatchObject({ errno: 400, message: 'Invalid funnel ID' })
  })

  test('creates a step with funnel_id, its path normalised, after the last step unless given an order', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner, { steps: [{}, {}] })
    const forgotten = cacheProbe(t.app, funnelId)
    const response = await funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, {
      stepInfo: { name: 'Thank you', path: ' Thank-You/ ' },
    })
    expect(response.statusCode).toBe(201)
    expect(response.json().data).toMatchObject({
      _id: anId,
      funnel_id: funnelId,
      name: 'Thank you',
      path: '/thank-you',
      type: 'page',
      order: 2,
    })
    expect(forgotten()).toBe(true)
    const placed = await funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, {
      stepInfo: { name: 'Redirect', path: 'out', type: 'redirect', order: 7 },
    })
    expect(placed.json().data).toMatchObject({ path: '/out', type: 'redirect', order: 7 })
    const asStranger = await funnelCall(t.app, stranger, 'POST', `/${funnelId}/steps`, {
      stepInfo: { name: 'Intruder', path: '/intruder' },
    })
    expect(asStranger.json()).toMatchObject({ errno: 404, message: 'Funnel not found' })
    expect(
      (await funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, { stepInfo: { path: '/x' } })).json(),
    ).toMatchObject({ errno: 400, message: 'stepInfo.name is required' })
  })

  test('bounds a given position, so that the next one after the last always fits: 400 past it', async ({
    t,
    owner,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const add = (stepInfo: object) => funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, { stepInfo })
    const huge = await add({ name: 'Huge', path: '/huge', order: 2_147_483_647 })
    expect(huge.json()).toMatchObject({ errno: 400, message: 'stepInfo.order must be <= 10000' })
    expect((await add({ name: 'Last', path: '/last', order: 10_000 })).statusCode).toBe(201)
    const after = await add({ name: 'After', path: '/after' })
    expect(after.statusCode).toBe(201)
    expect(after.json().data.order).toBe(10_001)
  })

  test('refuses a path already used in the funnel with 409, and allows it in another funnel', async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: [{ name: 'Offer', path: '/offer' }],
    })
    const taken = await funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, {
      stepInfo: { name: 'Again', path: '/OFFER/' },
    })
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toMatchObject({
      success: false,
      errno: 409,
      message: 'Path already in use',
      additional_info: { path: '/offer', conflicting_step: { _id: stepIds[0], name: 'Offer' } },
    })
    const other = await seedFunnel(t.app, owner)
    const elsewhere = await funnelCall(t.app, owner, 'POST', `/${other.funnelId}/steps`, {
      stepInfo: { name: 'Offer', path: '/offer' },
    })
    expect(elsewhere.statusCode).toBe(201)
  })

  test('lets exactly one of two concurrent creates of the same path win', async ({ t, owner }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const create = (name: string) =>
      funnelCall(t.app, owner, 'POST', `/${funnelId}/steps`, { stepInfo: { name, path: '/race' } })
    const answers = await Promise.all([create('A'), create('B'), create('C')])
    expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409, 409])
    for (const loser of answers.filter((a) => a.statusCode === 409))
      expect(loser.json().message).toBe('Path already in use')
  })

  test('updates name, path and fonts with updated_at, saves the components with a backup, forgets the cache', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { steps: [{}, { path: '/taken' }] })
    const stepId = stepIds[0] as string
    const url = `/${funnelId}/steps/${stepId}`
    await funnelCall(t.app, owner, 'POST', `${url}/components`, {
      builderComponents: builderDocument('first'),
    })
    const before = (await funnelCall(t.app, owner, 'GET', url)).json().data
    const forgotten = cacheProbe(t.app, funnelId)
    const response = await funnelCall(t.app, owner, 'PUT', url, {
      stepInfo: { name: 'Renamed', path: '/Renamed' },
      builderComponents: builderDocument('second'),
      externalFonts: ['https://fonts.example.com/inter.css'],
    })
    expect(response.statusCode).toBe(200)
    const updated = response.json().data
    expect(updated).toMatchObject({
      _id: stepId,
      name: 'Renamed',
      path: '/renamed',
      external_fonts: ['https://fonts.example.com/inter.css'],
    })
    expect(Date.parse(updated.updated_at)).toBeGreaterThan(Date.parse(before.updated_at))
    expect(forgotten()).toBe(true)
    const components = (await funnelCall(t.app, owner, 'GET', `${url}/components`)).json().data
    expect(components.components).toEqual(builderDocument('second'))
    const backups = (await funnelCall(t.app, owner, 'GET', `${url}/backups`)).json().data
    expect(backups).toHaveLength(1)
    const backup = (await funnelCall(t.app, owner, 'GET', `/rollback/${backups[0]._id}`)).json().data
    expect(backup.components).toEqual(builderDocument('first'))

    const taken = await funnelCall(t.app, owner, 'PUT', url, { stepInfo: { path: '/taken' } })
    expect(taken.json()).toMatchObject({ errno: 409, message: 'Path already in use' })
    expect(
      (await funnelCall(t.app, owner, 'PUT', url, { externalFonts: ['javascript:alert(1)'] })).statusCode,
    ).toBe(400)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PUT', url: `${FUNNELS}${url}`, payload: { stepInfo: { name: 'X' } } },
      owner,
      stranger,
    )
  })

  test('changes step settings: details, seo merged field by field, tracking code, css', async ({
    t,
    owner,
    stranger,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { steps: [{}, { path: '/other' }] })
    const url = `/steps/${stepIds[0]}/settings`
    const forgotten = cacheProbe(t.app, funnelId)
    const first = await funnelCall(t.app, owner, 'PUT', url, {
      details: { name: 'Home', path: 'Home' },
      seo: { title: 'Welcome', description: 'Our offer' },
      tracking_code: { header: '<script>a</script>', footer: '<script>b</script>' },
      css: 'body{margin:0}',
    })
    expect(first.statusCode).toBe(200)
    expect(first.json().data).toMatchObject({
      _id: stepIds[0],
      funnel_id: funnelId,
      name: 'Home',
      path: '/home',
      seo: { title: 'Welcome', description: 'Our offer' },
      tracking_code: { header: '<script>a</script>', footer: '<script>b</script>' },
      css: 'body{margin:0}',
    })
    expect(forgotten()).toBe(true)
    const second = await funnelCall(t.app, owner, 'PUT', url, {
      seo: { title: 'Hello' },
      tracking_code: { footer: '' },
    })
    expect(second.json().data).toMatchObject({
      name: 'Home',
      seo: { title: 'Hello', description: 'Our offer' },
      tracking_code: { header: '<script>a</script>', footer: '' },
      css: 'body{margin:0}',
    })
    const taken = await funnelCall(t.app, owner, 'PUT', url, { details: { path: '/other' } })
    expect(taken.json()).toMatchObject({ errno: 409, message: 'Path already in use' })
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'PUT', url: `${FUNNELS}${url}`, payload: { css: '' } },
      owner,
      stranger,
    )
  })

  test('answers 404 for every step route of a soft-deleted funnel', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { steps: [{}, {}] })
    const url = `/${funnelId}/steps/${stepIds[0]}`
    await softDeleteFunnel(t.app, funnelId)
    const calls: [Parameters<typeof funnelCall>[2], string, object?][] = [
      ['GET', url],
      ['POST', `/${funnelId}/steps`, { stepInfo: { name: 'New', path: '/new' } }],
      ['PUT', url, { stepInfo: { name: 'X' } }],
      ['PUT', `/${funnelId}/steps/orders`, { orders: [{ step_id: stepIds[0], order: 1 }] }],
      ['POST', `${url}/duplicate`],
      ['PUT', `/steps/${stepIds[0]}/settings`, { css: '' }],
      ['DELETE', url],
    ]
    for (const [method, path, payload] of calls) {
      const response = await funnelCall(t.app, owner, method, path, payload)
      expect(response.statusCode, `${method} ${path}`).toBe(404)
    }
  })

  test("takes an app's access token with sites.read to read and sites.write to change", async ({
    t,
    owner,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    await createUser(t.app, 'builder@sites.example', [owner.accountId])
    const reader = await registerApp(t.app, { scopes: ['sites.read'] })
    const token = (await obtainTokens(t.app, reader, 'builder@sites.example', 'sites.read')).access_token
    const asApp = { ...owner, headers: bearer(token) }
    expect((await funnelCall(t.app, asApp, 'GET', `/${funnelId}/steps/${stepIds[0]}`)).statusCode).toBe(200)
    const write = await funnelCall(t.app, asApp, 'POST', `/${funnelId}/steps`, {
      stepInfo: { name: 'A', path: '/a' },
    })
    expect(write.statusCode).toBe(403)
    expect(write.json().additional_info).toEqual({ error: 'insufficient_scope', scope: 'sites.write' })
  })

  test('requires a bearer token', async ({ t }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, { accountId: newId() })
    const response = await t.app.inject({ url: `${FUNNELS}/${funnelId}/steps/${stepIds[0]}` })
    expect(response.statusCode).toBe(401)
  })
})
