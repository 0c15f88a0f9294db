import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, freePort, type TestApp } from '../../../test/helpers/app.js'
import { SYNC_DUE_CAMPAIGNS_JOB } from '../../modules/leads/lead-sync.service.js'

const METRICS_TOKEN = 'metrics-token-0123456789'

/** The value of the first sample whose line starts with `prefix` (name and labels), or undefined. */
function sample(text: string, prefix: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(prefix))
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1))
}

describe('GET /metrics behind METRICS_TOKEN', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp({ METRICS_TOKEN })
  })
  afterAll(() => t.close())

  it('refuses a request without the token or with another one', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', METRICS_TOKEN]) {
      const response = await t.app.inject({
        url: '/metrics',
        headers: authorization ? { authorization } : {},
      })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ success: false, errno: 401 })
    }
  })

  it('measures requests by route pattern, method and status, and reads jobs, event-loop lag and memory', async () => {
    await t.app.inject({ url: '/status' })
    await t.app.inject({ url: '/status' })
    await t.app.inject({ url: '/v1/nowhere/0123456789abcdef01234567' })
    const { platform } = t.app
    const inAnHour = new Date(Date.now() + 3_600_000)
    // Any job the service defines; due in an hour, it stays `created` while the test looks.
    await platform.queue.enqueue(platform.db, SYNC_DUE_CAMPAIGNS_JOB, {}, { startAfter: inAnHour })

    const response = await t.app.inject({
      url: '/metrics',
      headers: { authorization: `Bearer ${METRICS_TOKEN}` },
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/)
    const text = response.body
    const count = (labels: string) => sample(text, `http_request_duration_seconds_count{${labels}}`)
    expect(count('route="/status",method="GET",status_code="200"')).toBe(2)
    expect(count('route="unmatched",method="GET",status_code="404"')).toBe(1)
    expect(sample(text, `jobs{queue="${SYNC_DUE_CAMPAIGNS_JOB}",state="created"}`)).toBe(1)
    expect(sample(text, 'nodejs_eventloop_lag_seconds ')).toBeGreaterThanOrEqual(0)
    expect(sample(text, 'process_resident_memory_bytes ')).toBeGreaterThan(10_000_000)
    expect(sample(text, 'nodejs_heap_size_used_bytes ')).toBeGreaterThan(1_000_000)
    if (t.config.databaseUrl) {
      expect(sample(text, 'database_pool_connections{state="total"}')).toBeGreaterThanOrEqual(1)
      expect(sample(text, 'database_pool_connections{state="in_use"}')).toBeGreaterThanOrEqual(0)
    }
  })

  it('is left out of the API reference', async () => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json()
    expect(spec.paths['/metrics']).toBeUndefined()
  })
})

describe('metrics on METRICS_PORT', () => {
  let t: TestApp
  let port: number
  beforeAll(async () => {
    port = await freePort()
    t = await buildTestApp({ METRICS_PORT: String(port), HOST: '127.0.0.1' })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(() => t.close())

  it('serves /metrics there without a token, and not on the API port', async () => {
    const { port: apiPort } = t.app.server.address() as { port: number }
    await fetch(`http://127.0.0.1:${apiPort}/status`)
    const scraped = await fetch(`http://127.0.0.1:${port}/metrics`)
    expect(scraped.status).toBe(200)
    expect(await scraped.text()).toContain('http_request_duration_seconds_count{route="/status"')
    expect((await fetch(`http://127.0.0.1:${port}/status`)).status).toBe(404)
    expect((await fetch(`http://127.0.0.1:${apiPort}/metrics`)).status).toBe(404)
  })
})

describe('without METRICS_TOKEN or METRICS_PORT', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('serves no metrics', async () => {
    expect((await t.app.inject({ url: '/metrics' })).statusCode).toBe(404)
  })
})
