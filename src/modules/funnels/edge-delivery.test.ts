import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { edgeGet, edgePost, nowSeconds, signedBody, signedQuery } from '../../../test/helpers/edge.js'
import { seedFunnel, softDeleteFunnel } from '../../../test/helpers/funnels.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { newId } from '../../platform/db/ids.js'
import { MAX_JSON_DEPTH } from '../../platform/http/request-guards.js'
import { signEdgeRequest } from './edge-delivery.service.js'
import { EDGE_STEP_PATH } from './edge-protocol.js'
import { funnelSteps, funnels } from './tables.js'

const host = () => `shop-${randomBytes(4).toString('hex')}.example.com`
const UNAUTHORIZED = { success: false, errno: 401, message: 'Unauthorized' }

describe('the edge signature', () => {
  test('serves a well-signed GET and refuses a bad, stale, missing or tampered one', async ({ t, owner }) => {
    const domainName = host()
    await seedFunnel(t.app, owner, { domainName, basePath: '/sale', steps: [{ path: '/order' }] })
    const page = { hostname: domainName, pathname: '/sale/order' }
    const secret = t.config.edge.signingSecret
    expect((await edgeGet(t.app, page)).statusCode).toBe(200)
    expect((await edgeGet(t.app, page, { ts: nowSeconds() - 290 })).statusCode).toBe(200)

    const refused = [
      await edgeGet(t.app, page, { secret: 'another-secret-another-secret-0000' }),
      await edgeGet(t.app, page, { ts: nowSeconds() - 301 }),
      await edgeGet(t.app, page, { ts: nowSeconds() + 301 }),
    ]
    const query = new URLSearchParams(signedQuery(page, { secret }))
    const without = (name: string) => {
      const copy = new URLSearchParams(query)
      copy.delete(name)
      return copy
    }
    const tampered = new URLSearchParams(query)
    tampered.set('pathname', '/sale/other')
    const added = new URLSearchParams(query)
    added.set('isPreview', 'true')
    // The right signature, but not as lowercase hex of 64 digits.
    const sig = query.get('_sig') as string
    const malformed = [sig.toUpperCase(), sig.slice(0, 62), `${sig}00`].map((other) => {
      const copy = new URLSearchParams(query)
      copy.set('_sig', other)
      return copy
    })
    for (const search of [without('_sig'), without('_ts'), tampered, added, ...malformed]) {
      refused.push(await t.app.inject({ url: `${EDGE_STEP_PATH}?${search}` }))
    }
    // Signed for another path, or as a POST: the method and the path are part of what is signed.
    const ts = nowSeconds()
    for (const [method, path] of [
      ['GET', '/v1/funnels/cloudflare/other'],
      ['POST', EDGE_STEP_PATH],
    ] as const) {
      const search = new URLSearchParams({
        ...page,
        _ts: String(ts),
        _sig: signEdgeRequest(secret, method, path, ts, page),
      })
      refused.push(await t.app.inject({ url: `${EDGE_STEP_PATH}?${search}` }))
    }
    for (const response of refused) {
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject(UNAUTHORIZED)
    }
  })

  test('judges a POST by its signature before the JSON guards walk its body', async ({ t }) => {
    const deep = `${'['.repeat(MAX_JSON_DEPTH + 1)}${']'.repeat(MAX_JSON_DEPTH + 1)}`
    const post = (payload: string, headers = {}) =>
      t.app.inject({
        method: 'POST',
        url: EDGE_STEP_PATH,
        headers: { 'content-type': 'application/json', ...headers },
        payload,
      })
    for (const unsigned of [
      `{"html":"a\\u0000b"}`,
      `{"_ts":${nowSeconds()},"_sig":"${'0'.repeat(64)}","html":"a\\u0000b"}`,
    ]) {
      const response = await post(unsigned)
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject(UNAUTHORIZED)
    }
    // A POST without a body, which no parser verified, is refused as unsigned too.
    expect((await t.app.inject({ method: 'POST', url: EDGE_STEP_PATH })).statusCode).toBe(401)
    // Only the pass over the text comes first: nesting past the limit is refused before anything is parsed.
    expect((await post(`{"html":${deep}}`)).statusCode).toBe(400)
  })

  test('refuses a POST that is badly signed, stale, unsigned or whose body was changed', async ({
    t,
    owner,
  }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const body = { step_id: stepIds[0], html: '<p>synced</p>', newHash: 'h1' }
    const secret = t.config.edge.signingSecret
    const refused = [
      await edgePost(t.app, body, { secret: 'another-secret-another-secret-0000' }),
      await edgePost(t.app, body, { ts: nowSeconds() - 301 }),
      await t.app.inject({ method: 'POST', url: EDGE_STEP_PATH, payload: body }),
      await t.app.inject({
        method: 'POST',
        url: EDGE_STEP_PATH,
        payload: { ...signedBody(body, { secret }), html: '<p>changed on the way</p>' },
      }),
      await t.app.inject({
        method: 'POST',
        url: EDGE_STEP_PATH,
        payload: { ...signedBody(body, { secret }), skipIfUnchanged: true },
      }),
    ]
    for (const response of refused) {
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject(UNAUTHORIZED)
    }
    const [step] = await t.app.platform.db
      .select()
      .from(funnelSteps)
      .where(eq(funnelSteps.id, stepIds[0] as string))
    expect(step?.checksum).toBeNull()
    expect((await edgePost(t.app, body)).statusCode).toBe(200)
  })
})

describe('GET /v1/funnels/cloudflare/step', () => {
  test("answers the spec's data for the step at the hostname and full path", async ({ t, owner }) => {
    const domainName = host()
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      domainName,
      basePath: '/Sale',
      steps: [{ path: '/' }, { path: '/order', html: '<h1>Order</h1>' }],
    })
    await t.app.platform.db
      .update(funnelSteps)
      .set({ seo: { title: 'Order now' }, trackingCode: { header: '<script>h</script>' }, css: 'h1{}' })
      .where(eq(funnelSteps.id, stepIds[1] as string))
    const response = await edgeGet(t.app, { hostname: domainName.toUpperCase(), pathname: '/sale/Order/' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
    expect(response.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: {
        step_id: stepIds[1],
        funnel_id: funnelId,
        html: '<h1>Order</h1>',
        checksum: null,
        seo: { title: 'Order now' },
        tracking_code: { header: '<script>h</script>' },
        css: 'h1{}',
      },
    })
    // The step at the funnel's own path ("/") is served at the base path.
    const first = await edgeGet(t.app, { hostname: domainName, pathname: '/sale' })
    expect(first.json().data.step_id).toBe(stepIds[0])
  })

  test('prefers the funnel with the longer base path when two funnels of a domain match', async ({
    t,
    owner,
  }) => {
    const domainName = host()
    const root = await seedFunnel(t.app, owner, { domainName, basePath: '/', steps: [{ path: '/a/b' }] })
    const [domain] = await t.app.platform.db
      .select({ id: funnels.domainId })
      .from(funnels)
      .where(eq(funnels.id, root.funnelId))
    const nestedId = newId()
    await t.app.platform.db.insert(funnels).values({
      id: nestedId,
      accountId: owner.accountId,
      name: 'Nested',
      domainId: domain?.id,
      basePath: '/a',
      status: 'active',
    })
    const nestedStep = newId()
    await t.app.platform.db.insert(funnelSteps).values({
      id: nestedStep,
      accountId: owner.accountId,
      funnelId: nestedId,
      name: 'B',
      path: '/b',
      order: 0,
    })
    const response = await edgeGet(t.app, { hostname: domainName, pathname: '/a/b' })
    expect(response.json().data).toMatchObject({ step_id: nestedStep, funnel_id: nestedId })
  })

  test('finds a step by funnel_id whatever the host, and only there', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, { basePath: '/offer' })
    const page = { hostname: 'anything.example.net', pathname: '/offer/step-1' }
    expect((await edgeGet(t.app, { ...page, funnel_id: funnelId })).json().data.step_id).toBe(stepIds[0])
    // Without a domain and without funnel_id, no host leads to it.
    expect((await edgeGet(t.app, page)).json()).toMatchObject({ errno: 404, message: 'Funnel not found' })
    const other = await seedFunnel(t.app, owner, { basePath: '/other' })
    expect((await edgeGet(t.app, { ...page, funnel_id: other.funnelId })).json()).toMatchObject({
      errno: 404,
      message: 'Step not found',
    })
    const malformed = await edgeGet(t.app, { ...page, funnel_id: 'not-an-id' })
    expect(malformed.statusCode).toBe(400)
    expect(malformed.json()).toMatchObject({ message: 'Invalid funnel ID' })
  })

  test('decodes a percent-encoded pathname, as a URL carries a path outside ASCII', async ({ t, owner }) => {
    const { funnelId, stepIds } = await seedFunnel(t.app, owner, {
      basePath: '/menü',
      steps: [{ path: '/café' }],
    })
    const page = { hostname: 'anything.example.net', funnel_id: funnelId }
    const encoded = await edgeGet(t.app, { ...page, pathname: '/men%C3%BC/caf%C3%A9' })
    expect(encoded.json().data.step_id).toBe(stepIds[0])
    const broken = await edgeGet(t.app, { ...page, pathname: '/men%C3%BC/caf%E9%' })
    expect(broken.json()).toMatchObject({ errno: 404, message: 'Step not found' })
  })

  test('answers 404 for an unknown host, another domain, an unknown path, and a deleted funnel', async ({
    t,
    owner,
    stranger,
  }) => {
    const domainName = host()
    const { funnelId } = await seedFunnel(t.app, owner, { domainName, basePath: '/sale' })
    const strangers = host()
    await seedFunnel(t.app, stranger, { domainName: strangers, basePath: '/elsewhere' })
    const notFound = async (params: Record<string, string>, message: string) => {
      const response = await edgeGet(t.app, params)
      expect(response.statusCode).toBe(404)
      expect(response.json()).toEqual({ success: false, errno: 404, message })
    }
    await notFound({ hostname: host(), pathname: '/sale/step-1' }, 'Funnel not found')
    await notFound({ hostname: strangers, pathname: '/sale/step-1' }, 'Step not found')
    await notFound({ hostname: domainName, pathname: '/sale/step-9' }, 'Step not found')
    await softDeleteFunnel(t.app, funnelId)
    await notFound({ hostname: domainName, pathname: '/sale/step-1' }, 'Funnel not found')
    await notFound({ hostname: domainName, pathname: '/sale/step-1', isPreview: 'true' }, 'Funnel not found')
    await notFound({ hostname: 'x', pathname: '/sale/step-1', funnel_id: funnelId }, 'Funnel not found')
  })

  test.for(['inactive', 'draft'] as const)(
    'serves an %s funnel only in preview',
    async (status, { t, owner }) => {
      const domainName = host()
      const { stepIds } = await seedFunnel(t.app, owner, { domainName, basePath: '/soon', status })
      const page = { hostname: domainName, pathname: '/soon/step-1' }
      expect((await edgeGet(t.app, page)).json()).toMatchObject({ errno: 404, message: 'Funnel not found' })
      expect((await edgeGet(t.app, { ...page, isPreview: 'false' })).statusCode).toBe(404)
      const preview = await edgeGet(t.app, { ...page, isPreview: 'true' })
      expect(preview.json().data.step_id).toBe(stepIds[0])
    },
  )
})

describe('POST /v1/funnels/cloudflare/step (step HTML sync)', () => {
  const storedStep = async (t: { app: import('fastify').FastifyInstance }, stepId: string) => {
    const [step] = await t.app.platform.db.select().from(funnelSteps).where(eq(funnelSteps.id, stepId))
    return { html: step?.html, checksum: step?.checksum }
  }

  test('UPDATED: a step never synced matches an absent currentHash, then the hash it was given', async ({
    t,
    owner,
  }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const stepId = stepIds[0] as string
    const first = await edgePost(t.app, { step_id: stepId, html: '<p>v1</p>', newHash: 'h1' })
    expect(first.statusCode).toBe(200)
    expect(first.json()).toEqual({
      success: true,
      message: 'UPDATED',
      data: { step_id: stepId, updated: true, reason: 'UPDATED', checksum: 'h1' },
    })
    const second = await edgePost(t.app, {
      step_id: stepId,
      html: '<p>v2</p>',
      newHash: 'h2',
      currentHash: 'h1',
    })
    expect(second.json()).toMatchObject({ success: true, message: 'UPDATED', data: { checksum: 'h2' } })
    expect(await storedStep(t, stepId)).toEqual({ html: '<p>v2</p>', checksum: 'h2' })
  })

  test('NO_CHANGE: skipIfUnchanged with the stored hash writes nothing', async ({ t, owner }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const stepId = stepIds[0] as string
    await edgePost(t.app, { step_id: stepId, html: '<p>v1</p>', newHash: 'h1' })
    const again = await edgePost(t.app, {
      step_id: stepId,
      html: '<p>not written</p>',
      newHash: 'h1',
      currentHash: 'h1',
      skipIfUnchanged: true,
    })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual({
      success: true,
      message: 'NO_CHANGE',
      data: { step_id: stepId, updated: false, reason: 'NO_CHANGE', checksum: 'h1' },
    })
    expect(await storedStep(t, stepId)).toEqual({ html: '<p>v1</p>', checksum: 'h1' })
  })

  test('NOT_FOUND: an unknown step, or a step of a deleted funnel', async ({ t, owner }) => {
    const unknown = newId()
    const response = await edgePost(t.app, { step_id: unknown, html: '<p/>', newHash: 'h1' })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toEqual({
      success: false,
      errno: 404,
      message: 'NOT_FOUND',
      data: { step_id: unknown, updated: false, reason: 'NOT_FOUND', checksum: null },
    })
    const { funnelId, stepIds } = await seedFunnel(t.app, owner)
    await softDeleteFunnel(t.app, funnelId)
    const deleted = await edgePost(t.app, { step_id: stepIds[0], html: '<p/>', newHash: 'h1' })
    expect(deleted.json()).toMatchObject({ success: false, message: 'NOT_FOUND' })
    expect((await storedStep(t, stepIds[0] as string)).checksum).toBeNull()
  })

  test('CONFLICT: a hash that is no longer the stored one gets 409 with the stored checksum', async ({
    t,
    owner,
  }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const stepId = stepIds[0] as string
    await edgePost(t.app, { step_id: stepId, html: '<p>v1</p>', newHash: 'h1' })
    for (const currentHash of ['stale', undefined]) {
      const response = await edgePost(t.app, {
        step_id: stepId,
        html: '<p>lost</p>',
        newHash: 'h9',
        currentHash,
      })
      expect(response.statusCode).toBe(409)
      expect(response.json()).toEqual({
        success: false,
        errno: 409,
        message: 'CONFLICT',
        data: { step_id: stepId, updated: false, reason: 'CONFLICT', checksum: 'h1' },
      })
    }
    // skipIfUnchanged does not turn a different hash into NO_CHANGE.
    const skipped = await edgePost(t.app, {
      step_id: stepId,
      html: '<p>lost</p>',
      newHash: 'h9',
      currentHash: 'stale',
      skipIfUnchanged: true,
    })
    expect(skipped.json()).toMatchObject({ message: 'CONFLICT' })
    expect(await storedStep(t, stepId)).toEqual({ html: '<p>v1</p>', checksum: 'h1' })
  })

  test('two updates racing from the same hash: exactly one wins', async ({ t, owner }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const stepId = stepIds[0] as string
    await edgePost(t.app, { step_id: stepId, html: '<p>base</p>', newHash: 'base' })
    for (let round = 0; round < 5; round++) {
      const current = (await storedStep(t, stepId)).checksum
      const answers = await Promise.all(
        ['a', 'b'].map((side) =>
          edgePost(t.app, {
            step_id: stepId,
            html: `<p>${side}${round}</p>`,
            newHash: `${side}${round}`,
            currentHash: current,
          }),
        ),
      )
      const reasons = answers.map((answer) => answer.json().message).sort()
      expect(reasons).toEqual(['CONFLICT', 'UPDATED'])
      const winner = answers.find((answer) => answer.json().message === 'UPDATED')?.json().data.checksum
      const loser = answers.find((answer) => answer.json().message === 'CONFLICT')?.json().data.checksum
      expect(loser).toBe(winner)
      expect(await storedStep(t, stepId)).toEqual({ html: `<p>${winner}</p>`, checksum: winner })
    }
  })

  test('takes HTML up to the 5 MB body limit and refuses a larger body with 413', async ({ t, owner }) => {
    const { stepIds } = await seedFunnel(t.app, owner)
    const html = `<p>${'x'.repeat(4 * 1024 * 1024)}</p>`
    const large = await edgePost(t.app, { step_id: stepIds[0], html, newHash: 'large' })
    expect(large.json()).toMatchObject({ message: 'UPDATED' })
    const tooLarge = await edgePost(t.app, {
      step_id: stepIds[0],
      html: 'x'.repeat(5 * 1024 * 1024),
      newHash: 'l2',
    })
    expect(tooLarge.statusCode).toBe(413)
    expect(tooLarge.json()).toMatchObject({ success: false, errno: 413 })
  })
})
