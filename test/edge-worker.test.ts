import { createHmac, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { Miniflare } from 'miniflare'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { hmacHex, PURGE_PATH, signedStepUrl } from '../edge/origin.js'
import { verifyEdgeSignature } from '../src/modules/funnels/edge-delivery.service.js'
import { listenTestApp, type TestApp } from './helpers/app.js'
import { edgePost, nowSeconds } from './helpers/edge.js'
import type { Tenant } from './helpers/fixtures.js'
import { createTenant } from './helpers/fixtures.js'
import { seedFunnel } from './helpers/funnels.js'

/**
 * The edge worker (edge/worker.ts) in Miniflare, bundled as wrangler would, in front of the real server
 * listening on 127.0.0.1 through a proxy that can fail or go away. Nothing leaves the machine.
 */

const SECRET = randomBytes(32).toString('hex')
const PURGE_TOKEN = randomBytes(16).toString('hex')
const FRESH_SECONDS = 3
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** The worker and the module it imports, in one ES module, as wrangler deploys it. */
async function bundleWorker(): Promise<string> {
  const result = await build({
    entryPoints: [fileURLToPath(new URL('../edge/worker.ts', import.meta.url))],
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    target: 'es2022',
    write: false,
  })
  return (result.outputFiles[0] as { text: string }).text
}

/** A proxy in front of the origin: `up` forwards, `failing` answers 503, `down` drops the connection. */
async function startOriginProxy() {
  const state = { target: '', mode: 'up' as 'up' | 'failing' | 'down', forwarded: 0 }
  const server = createServer(async (request, response) => {
    if (state.mode === 'down') return request.socket.destroy()
    if (state.mode === 'failing') return response.writeHead(503).end('Service Unavailable')
    state.forwarded++
    const answer = await fetch(`${state.target}${request.url}`, { method: request.method })
    response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
    response.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  return { state, url, close }
}

describe('the edge worker in Miniflare, against the real server', () => {
  let proxy: Awaited<ReturnType<typeof startOriginProxy>>
  let mf: Miniflare
  let origin: TestApp & { baseUrl: string }
  let owner: Tenant

  beforeAll(async () => {
    proxy = await startOriginProxy()
    mf = new Miniflare({
      modules: true,
      script: await bundleWorker(),
      compatibilityDate: '2026-04-20',
      kvNamespaces: ['PAGES'],
      bindings: {
        ORIGIN_URL: proxy.url,
        EDGE_SIGNING_SECRET: SECRET,
        PURGE_TOKEN,
        FRESH_SECONDS: String(FRESH_SECONDS),
      },
    })
    const workerUrl = await mf.ready
    origin = await listenTestApp({
      EDGE_SIGNING_SECRET: SECRET,
      EDGE_PURGE_URL: new URL(PURGE_PATH, workerUrl).href,
      EDGE_API_TOKEN: PURGE_TOKEN,
    })
    proxy.state.target = origin.baseUrl
    owner = await createTenant(origin.app)
  })

  afterAll(async () => {
    await mf?.dispose()
    await origin?.close()
    await proxy?.close()
  })

  it('serves from the origin, then its copy, the last good copy while the origin fails, and a fresh copy after a purge', async () => {
    const { funnelId, stepIds } = await seedFunnel(origin.app, owner, {
      domainName: 'shop.example.com',
      basePath: '/sale',
      steps: [{ path: '/order', html: '<h1>Order now</h1>' }],
    })
    const visit = async () => {
      const response = await mf.dispatchFetch('https://shop.example.com/sale/order')
      return {
        status: response.status,
        cache: response.headers.get('x-edge-cache'),
        page: await response.text(),
      }
    }

    const first = await visit()
    expect(first).toMatchObject({ status: 200, cache: 'MISS' })
    expect(first.page).toContain('<body><h1>Order now</h1></body>')
    expect(proxy.state.forwarded).toBe(1)
    expect(await visit()).toEqual({ ...first, cache: 'HIT' })
    expect(proxy.state.forwarded).toBe(1)

    await sleep(FRESH_SECONDS * 1000 + 100)
    proxy.state.mode = 'failing'
    expect(await visit()).toEqual({ ...first, cache: 'STALE' })
    proxy.state.mode = 'down'
    expect(await visit()).toEqual({ ...first, cache: 'STALE' })

    proxy.state.mode = 'up'
    expect(await visit()).toMatchObject({ cache: 'MISS', page: first.page })
    // The page changes at the origin; the edge keeps its fresh copy until the purge reaches it.
    const synced = await edgePost(origin.app, {
      step_id: stepIds[0],
      html: '<h1>Sale ends today</h1>',
      newHash: 'v2',
    })
    expect(synced.json()).toMatchObject({ message: 'UPDATED' })
    expect(await visit()).toMatchObject({ cache: 'HIT', page: first.page })
    const purged = await origin.app.inject({
      method: 'DELETE',
      url: `/v1/funnels/${funnelId}/cache?step_id=${stepIds[0]}`,
      headers: owner.headers,
    })
    expect(purged.json()).toEqual({ success: true, message: 'SUCCESS' })
    const fresh = await visit()
    expect(fresh).toMatchObject({ status: 200, cache: 'MISS' })
    expect(fresh.page).toContain('<h1>Sale ends today</h1>')
  })

  it('drops its copy when the origin no longer has the page, and answers 502 with no copy to serve', async () => {
    await seedFunnel(origin.app, owner, {
      domainName: 'gone.example.com',
      basePath: '/',
      steps: [{ path: '/' }],
    })
    expect((await mf.dispatchFetch('https://gone.example.com/missing')).status).toBe(404)
    proxy.state.mode = 'failing'
    try {
      expect((await mf.dispatchFetch('https://gone.example.com/')).status).toBe(502)
    } finally {
      proxy.state.mode = 'up'
    }
    expect((await mf.dispatchFetch('https://gone.example.com/')).headers.get('x-edge-cache')).toBe('MISS')
  })

  it('refuses a purge without the token, or with more than 100 tags', async () => {
    const purge = (authorization: string, tags: string[]) =>
      mf.dispatchFetch(`https://edge.example.com${PURGE_PATH}`, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ tags }),
      })
    expect((await purge('Bearer wrong', ['funnel-x'])).status).toBe(401)
    expect((await purge(`Bearer ${PURGE_TOKEN}`, Array(101).fill('t'))).status).toBe(400)
    expect((await purge(`Bearer ${PURGE_TOKEN}`, ['funnel-x'])).status).toBe(200)
  })
})

describe("the worker's signature and the origin's", () => {
  it('compute the same HMAC, and the origin accepts what the worker signs', async () => {
    for (const text of ['GET\n/p\n1\nhostname=a&pathname=/', 'POST\n/p\n2\nhtml=<p>é ✓</p>']) {
      expect(await hmacHex(SECRET, text)).toBe(createHmac('sha256', SECRET).update(text).digest('hex'))
    }
    const env = { ORIGIN_URL: 'https://api.example.com/', EDGE_SIGNING_SECRET: SECRET }
    const url = await signedStepUrl(env as never, 'shop.example.com', '/sale/a b', nowSeconds())
    const verify = (secret: string) =>
      verifyEdgeSignature(secret, {
        method: 'GET',
        path: url.pathname,
        params: Object.fromEntries(url.searchParams),
        nowSeconds: nowSeconds(),
      })
    expect(() => verify(SECRET)).not.toThrow()
    expect(() => verify(randomBytes(32).toString('hex'))).toThrow('Unauthorized')
  })
})
