import { Histogram, Registry } from 'prom-client'
import { describe, expect, it } from 'vitest'
import { RequestDurations } from './request-durations.js'

const BOUNDS = [0.001, 0.005, 0.01, 0.1]
const HELP = 'HTTP requests by route pattern, method and status'

/** Requests as the onResponse hook sees them: route pattern, method, status, seconds. */
const REQUESTS: [string, string, number, number][] = [
  ['/v1/contacts', 'GET', 200, 0.002],
  ['/v1/contacts', 'GET', 200, 0.02],
  ['/v1/contacts', 'GET', 200, 0.001],
  ['/v1/contacts', 'POST', 201, 3],
  ['unmatched', 'GET', 404, 0.0004],
  ['/v1/contacts', 'GET', 429, 0.1],
]

describe('RequestDurations', () => {
  it("is scraped as prom-client's Histogram of the same observations is, line for line", async () => {
    const ours = new Registry()
    const durations = new RequestDurations(HELP, BOUNDS)
    ours.registerMetric(durations as unknown as Histogram)
    const theirs = new Registry()
    const histogram = new Histogram({
      name: 'http_request_duration_seconds',
      help: HELP,
      labelNames: ['route', 'method', 'status_code'],
      buckets: BOUNDS,
      registers: [theirs],
    })
    for (const [route, method, status, seconds] of REQUESTS) {
      durations.observe(route, method, status, seconds)
      histogram.observe({ route, method, status_code: status }, seconds)
    }
    const scraped = await ours.metrics()
    // The same lines; the series come grouped by route, where prom-client keeps their first observation's order.
    const lines = (text: string) => text.split('\n').sort()
    expect(lines(scraped)).toEqual(lines(await theirs.metrics()))
    // A bound is inclusive (`le`), and a request above every bound counts in +Inf only.
    expect(scraped).toContain(
      'http_request_duration_seconds_bucket{le="0.001",route="/v1/contacts",method="GET",status_code="200"} 1',
    )
    expect(scraped).toContain(
      'http_request_duration_seconds_bucket{le="0.1",route="/v1/contacts",method="POST",status_code="201"} 0',
    )
  })

  it('starts over on reset', async () => {
    const registry = new Registry()
    const durations = new RequestDurations(HELP, BOUNDS)
    registry.registerMetric(durations as unknown as Histogram)
    durations.observe('/status', 'GET', 200, 0.003)
    durations.reset()
    expect(await registry.metrics()).not.toContain('http_request_duration_seconds_count')
  })
})
