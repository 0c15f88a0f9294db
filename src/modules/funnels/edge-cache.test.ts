import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { FAKE_PURGE_PATH, startFakeEdgePurgeApi } from '../../../test/fakes/edge-purge-api.js'
import { edgeGet } from '../../../test/helpers/edge.js'
import { expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { FUNNELS, funnelCall, seedFunnel, softDeleteFunnel } from '../../../test/helpers/funnels.js'
import { test as base } from '../../../test/helpers/tenant-test.js'
import { funnelSteps } from './tables.js'

const API_TOKEN = 'edge-api-token-for-tests'
const test = base.extend(
  'edgePurge',
  { scope: 'file' },
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the fixtures a fixture needs from its pattern
  async ({}, { onCleanup }) => {
    const fake = await startFakeEdgePurgeApi({ apiToken: API_TOKEN })
    onCleanup(() => fake.close())
    return fake
  },
)
test.override('appEnv', ({ edgePurge }) => ({
  EDGE_PURGE_URL: `${edgePurge.url}${FAKE_PURGE_PATH}`,
  EDGE_API_TOKEN: API_TOKEN,
}))

const host = () => `shop-${randomBytes(4).toString('hex')}.example.com`
const purge = (app: Parameters<typeof funnelCall>[0], tenant: Tenant, funnelId: string, query = '') =>
  funnelCall(app, tenant, 'DELETE', `/${funnelId}/cache${query}`)

describe('DELETE /v1/funnels/:id/cache', () => {
  test("purges one step by its tag at the edge, and the funnel's pages here", async ({
    t,
    owner,
    edgePurge,
  }) => {
    const domainName = host()
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      domainName,
      basePath: '/p',
      steps: [{}, {}],
    })
    const page = { hostname: domainName, pathname: '/p/step-2' }
    await edgeGet(t.app, page)
    await t.app.platform.db
      .update(funnelSteps)
      .set({ html: '<h1>Edited</h1>' })
      .where(eq(funnelSteps.id, stepIds[1] as string))
    expect((await edgeGet(t.app, page)).json().data.html).toBe('<h1>Step 2</h1>')
    const before = edgePurge.purges.length
    const response = await purge(t.app, owner, funnelId, `?step_id=${stepIds[1]}`)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect(edgePurge.purges.slice(before)).toEqual([{ tags: [`step-${stepIds[1]}`] }])
    expect((await edgeGet(t.app, page)).json().data.html).toBe('<h1>Edited</h1>')
  })

  test("saving a step purges the step's tag at the edge once the save has committed", async ({
    t,
    owner,
    edgePurge,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const before = edgePurge.purges.length
    const saved = await funnelCall(t.app, owner, 'PUT', `/${funnelId}/steps/${stepIds[0]}`, {
      stepInfo: { name: 'Renamed' },
    })
    expect(saved.statusCode).toBe(200)
    await expect.poll(() => edgePurge.purges.slice(before)).toEqual([{ tags: [`step-${stepIds[0]}`] }])
    // A save refused (another account's step) purges nothing.
    const refused = await funnelCall(t.app, owner, 'PUT', `/${funnelId}/steps/${'f'.repeat(24)}`, {
      stepInfo: { name: 'Nobody' },
    })
    expect(refused.statusCode).toBe(404)
    expect(edgePurge.purges.slice(before)).toHaveLength(1)
  })

  test('purges every step in batches of at most 100 tags, with the API token', async ({
    t,
    owner,
    edgePurge,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      steps: Array.from({ length: 250 }, () => ({})),
    })
    const before = edgePurge.purges.length
    const beforeRequests = edgePurge.requests.length
    expect((await purge(t.app, owner, funnelId, '?all=true')).statusCode).toBe(200)
    const sent = edgePurge.purges.slice(before)
    expect(sent.map((batch) => batch.tags?.length)).toEqual([100, 100, 50])
    expect(sent.flatMap((batch) => batch.tags)).toEqual(stepIds.map((id) => `step-${id}`))
    expect(edgePurge.requests.slice(beforeRequests).map((request) => request.headers.authorization)).toEqual(
      Array(3).fill(`Bearer ${API_TOKEN}`),
    )
  })

  test('purges the funnel-level tag when neither step_id nor all is given', async ({
    t,
    owner,
    edgePurge,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const before = edgePurge.purges.length
    expect((await purge(t.app, owner, funnelId)).statusCode).toBe(200)
    expect((await purge(t.app, owner, funnelId, '?all=false')).statusCode).toBe(200)
    expect(edgePurge.purges.slice(before)).toEqual([
      { tags: [`funnel-${funnelId}`] },
      { tags: [`funnel-${funnelId}`] },
    ])
  })

  test("hides another account's funnel (404) and purges nothing for it", async ({
    t,
    owner,
    stranger,
    edgePurge,
  }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    const before = edgePurge.purges.length
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'DELETE', url: `${FUNNELS}/${funnelId}/cache?step_id=${stepIds[0]}` },
      owner,
      stranger,
    )
    expect(edgePurge.purges.slice(before)).toEqual([{ tags: [`step-${stepIds[0]}`] }])
    const asStranger = await purge(t.app, stranger, funnelId)
    expect(asStranger.json()).toEqual({ success: false, errno: 404, message: 'Funnel not found' })
  })

  test("answers the funnel errors: malformed id, another funnel's step, a deleted funnel", async ({
    t,
    owner,
    edgePurge,
  }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    const other = await seedFunnel(t.app, owner)
    const before = edgePurge.purges.length
    const malformed = await purge(t.app, owner, 'not-an-id')
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json()).toMatchObject({ message: 'Invalid funnel ID' })
    const foreignStep = await purge(t.app, owner, funnelId, `?step_id=${other.stepIds[0]}`)
    expect(foreignStep.statusCode).toBe(404)
    expect(foreignStep.json()).toMatchObject({ message: 'Step not found' })
    await softDeleteFunnel(t.app, other.funnelId)
    expect((await purge(t.app, owner, other.funnelId)).json()).toMatchObject({
      errno: 404,
      message: 'Funnel not found',
    })
    expect(edgePurge.purges.length).toBe(before)
  })

  test('retries a failing edge, then answers 502 when it keeps failing', async ({ t, owner, edgePurge }) => {
    const { funnelId } = await seedFunnel(t.app, owner)
    edgePurge.failNext(503, 2)
    expect((await purge(t.app, owner, funnelId)).statusCode).toBe(200)
    edgePurge.failNext(503, 3)
    const failed = await purge(t.app, owner, funnelId)
    expect(failed.statusCode).toBe(502)
    expect(failed.json()).toMatchObject({ success: false, errno: 502, message: 'Edge cache purge failed' })
  })
})
