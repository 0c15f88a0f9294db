import { eq } from 'drizzle-orm'
import { describe, expect, it, vi } from 'vitest'
import { withTwoInstancesSharingRedis } from '../../../test/helpers/app.js'
import { edgeGet, edgePost } from '../../../test/helpers/edge.js'
import { seedFunnel, uniqueHostname } from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { createStepCache, stepCacheOf } from './step-cache.js'
import { funnelSteps } from './tables.js'

const cacheOf = (maxEntries: number, maxChars: number) =>
  createStepCache<string>({ maxEntries, maxChars, sizeOf: (value) => value.length, ttlMs: 60_000 })

describe('the step cache', () => {
  it('keeps at most maxEntries, dropping the least recently used first', () => {
    const cache = cacheOf(2, 1_000)
    cache.set('a', 'f1', 'A', cache.generation())
    cache.set('b', 'f1', 'B', cache.generation())
    expect(cache.get('a')).toBe('A')
    cache.set('c', 'f2', 'C', cache.generation())
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual(['A', undefined, 'C'])
  })

  it('keeps at most maxChars, and no entry larger than all of it', () => {
    const cache = cacheOf(100, 10)
    cache.set('a', 'f1', 'x'.repeat(6), cache.generation())
    cache.set('b', 'f1', 'y'.repeat(6), cache.generation())
    expect([cache.get('a'), cache.get('b')]).toEqual([undefined, 'yyyyyy'])
    cache.set('huge', 'f1', 'z'.repeat(11), cache.generation())
    expect(cache.get('huge')).toBeUndefined()
  })

  it("forgets all of a funnel's entries and only them", () => {
    const cache = cacheOf(100, 1_000)
    cache.set('a', 'f1', 'A', cache.generation())
    cache.set('b', 'f1', 'B', cache.generation())
    cache.set('c', 'f2', 'C', cache.generation())
    cache.forgetFunnel('f1')
    expect([cache.get('a'), cache.get('b'), cache.get('c')]).toEqual([undefined, undefined, 'C'])
  })

  it('does not keep a value read before a forget (a write committed during the read)', () => {
    const cache = cacheOf(100, 1_000)
    const generation = cache.generation()
    cache.forgetFunnel('f1')
    cache.set('a', 'f1', 'read before the write', generation)
    expect(cache.get('a')).toBeUndefined()
    cache.set('a', 'f1', 'read after', cache.generation())
    expect(cache.get('a')).toBe('read after')
  })
})

describe('the origin step cache', () => {
  const setHtml = (t: { app: import('fastify').FastifyInstance }, stepId: string, html: string) =>
    t.app.platform.db.update(funnelSteps).set({ html }).where(eq(funnelSteps.id, stepId))

  test('serves a page from the cache until the funnel is forgotten or the edge syncs it', async ({
    t,
    owner,
  }) => {
    const domainName = uniqueHostname()
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { domainName, basePath: '/c' })
    const stepId = stepIds[0] as string
    const page = { hostname: domainName, pathname: '/c/step-1' }
    const html = async () => (await edgeGet(t.app, page)).json().data.html
    expect(await html()).toBe('<h1>Step 1</h1>')
    // A write that does not forget the funnel is not seen: the answer came from the cache.
    await setHtml(t, stepId, '<h1>Written behind the cache</h1>')
    expect(await html()).toBe('<h1>Step 1</h1>')
    stepCacheOf(t.app.platform).forgetFunnel(funnelId)
    expect(await html()).toBe('<h1>Written behind the cache</h1>')

    await setHtml(t, stepId, '<h1>Behind again</h1>')
    expect(await html()).toBe('<h1>Written behind the cache</h1>')
    await edgePost(t.app, { step_id: stepId, html: '<h1>Synced</h1>', newHash: 's1' })
    expect((await edgeGet(t.app, page)).json().data).toMatchObject({
      html: '<h1>Synced</h1>',
      checksum: 's1',
    })
  })

  test('DELETE /:id/cache without EDGE_PURGE_URL purges the local cache only', async ({ t, owner }) => {
    const domainName = uniqueHostname()
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { domainName, basePath: '/local' })
    const page = { hostname: domainName, pathname: '/local/step-1' }
    await edgeGet(t.app, page)
    await setHtml(t, stepIds[0] as string, '<h1>New</h1>')
    const purged = await t.app.inject({
      method: 'DELETE',
      url: `/v1/funnels/${funnelId}/cache?all=true`,
      headers: owner.headers,
    })
    expect(purged.json()).toEqual({ success: true, message: 'SUCCESS' })
    expect((await edgeGet(t.app, page)).json().data.html).toBe('<h1>New</h1>')
  })
})

describe.runIf(process.env.REDIS_URL)('the origin step cache, with Redis', () => {
  test('a funnel forgotten on one instance is forgotten on every instance', async ({ appEnv }) => {
    const owner = { accountId: newId() }
    await withTwoInstancesSharingRedis(appEnv, async (t, other) => {
      const domainName = uniqueHostname()
      const { funnelId, stepIds } = await seedFunnel(t.app, owner, { domainName, basePath: '/r' })
      const page = { hostname: domainName, pathname: '/r/step-1' }
      const html = async () => (await edgeGet(other, page)).json().data.html
      expect(await html()).toBe('<h1>Step 1</h1>')
      await t.app.platform.db
        .update(funnelSteps)
        .set({ html: '<h1>New</h1>' })
        .where(eq(funnelSteps.id, stepIds[0] as string))
      expect(await html()).toBe('<h1>Step 1</h1>')
      stepCacheOf(t.app.platform).forgetFunnel(funnelId)
      await vi.waitFor(async () => expect(await html()).toBe('<h1>New</h1>'), {
        timeout: 2_000,
        interval: 20,
      })
      // An edge sync on one instance reaches the other's cache too.
      await edgePost(t.app, { step_id: stepIds[0], html: '<h1>Synced</h1>', newHash: 's1' })
      await vi.waitFor(async () => expect(await html()).toBe('<h1>Synced</h1>'), {
        timeout: 2_000,
        interval: 20,
      })
    })
  })
})
