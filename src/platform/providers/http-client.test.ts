import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest'
import type { Logger } from '../log/logger.js'
import { ProviderUnreachable, providerRequest } from './http-client.js'
import {
  CIRCUIT_STATE_VALUES,
  configureProviderCircuits,
  ProviderUnavailable,
  providerCircuitStates,
} from './provider-circuits.js'

interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  body: string
}

interface Answer {
  status: number
  headers?: Record<string, string>
  body?: string
}

/** A provider on 127.0.0.1 that records every request and answers from a script; `/hang` never answers. */
class FakeProvider {
  readonly received: ReceivedRequest[] = []
  private answers: Answer[] = []
  private readonly server: Server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const { method = '', url = '', headers } = request
      this.received.push({ method, url, headers, body: Buffer.concat(chunks).toString() })
      if (url.startsWith('/hang')) return
      const answer = this.answers.shift() ?? { status: 200 }
      response.writeHead(answer.status, answer.headers).end(answer.body)
    })
  })

  url = ''

  async start(): Promise<void> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve))
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
  }

  async stop(): Promise<void> {
    // Hanging requests hold their sockets open; close() alone would wait for them forever.
    this.server.closeAllConnections()
    await new Promise((resolve) => this.server.close(resolve))
  }

  /** The next requests get these answers in order, then 200 with no body. */
  answer(...answers: Answer[]): void {
    this.answers = answers
  }

  reset(): void {
    this.received.length = 0
    this.answers = []
  }
}

interface LogCall {
  level: string
  fields: Record<string, unknown>
  message: string
}

/** Collects what the client logs; only the methods a logger is called with matter here. */
function fakeLogger(): { log: Logger; calls: LogCall[] } {
  const calls: LogCall[] = []
  const at = (level: string) => (fields: Record<string, unknown>, message: string) => {
    calls.push({ level, fields, message })
  }
  const log = {
    level: 'info',
    trace: at('trace'),
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    fatal: at('fatal'),
    silent: () => undefined,
    child: () => log,
  }
  return { log: log as unknown as Logger, calls }
}

const json = (value: unknown): Answer => ({
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(value),
})

describe('providerRequest', () => {
  const provider = new FakeProvider()
  beforeAll(() => provider.start())
  afterAll(() => provider.stop())
  beforeEach(() => provider.reset())

  it('parses a JSON answer and returns status and headers', async () => {
    provider.answer(json({ ok: true, items: [1, 2] }))
    const response = await providerRequest({ provider: 'listings', url: `${provider.url}/items` })
    expect(response.status).toBe(200)
    expect(response.body).toEqual({ ok: true, items: [1, 2] })
    expect(response.headers['content-type']).toBe('application/json')
  })

  it('returns a body that is not JSON as text, and an empty one as null', async () => {
    provider.answer({ status: 200, body: 'plain words' }, { status: 204 })
    expect((await providerRequest({ provider: 'listings', url: `${provider.url}/text` })).body).toBe(
      'plain words',
    )
    expect((await providerRequest({ provider: 'listings', url: `${provider.url}/empty` })).body).toBeNull()
  })

  it('adds query parameters to those of the URL and leaves undefined ones out', async () => {
    await providerRequest({
      provider: 'listings',
      url: `${provider.url}/search?v=20200525`,
      query: { q: 'coffee shop', page: 2, exact: false, offset: undefined },
    })
    const url = new URL(provider.received[0]?.url ?? '', provider.url)
    expect(url.pathname).toBe('/search')
    expect(Object.fromEntries(url.searchParams)).toEqual({
      v: '20200525',
      q: 'coffee shop',
      page: '2',
      exact: 'false',
    })
  })

  it('sends an object body as JSON with its content type', async () => {
    await providerRequest({
      provider: 'listings',
      method: 'POST',
      url: `${provider.url}/emit`,
      body: { event: 'x', data: [1] },
    })
    const [request] = provider.received
    expect(request?.method).toBe('POST')
    expect(request?.headers['content-type']).toBe('application/json')
    expect(JSON.parse(request?.body ?? '')).toEqual({ event: 'x', data: [1] })
  })

  it("keeps the caller's content type and accept whatever their letter case", async () => {
    await providerRequest({
      provider: 'listings',
      method: 'POST',
      url: `${provider.url}/form`,
      headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'text/xml' },
      body: 'To=%2B15550100&Body=hi',
    })
    const [request] = provider.received
    expect(request?.headers['content-type']).toBe('application/x-www-form-urlencoded')
    expect(request?.headers.accept).toBe('text/xml')
    expect(request?.body).toBe('To=%2B15550100&Body=hi')
  })

  it('retries a 503 and returns the answer that finally succeeded', async () => {
    const unavailable = { status: 503, headers: { 'retry-after': '0' } }
    provider.answer(unavailable, unavailable, json({ attempt: 3 }))
    const response = await providerRequest({ provider: 'listings', url: `${provider.url}/flaky`, retries: 2 })
    expect(response).toMatchObject({ status: 200, body: { attempt: 3 } })
    expect(provider.received).toHaveLength(3)
  })

  it('retries a 429 up to `retries` times, honouring Retry-After: 0, then returns the last answer', async () => {
    const limited = (attempt: number): Answer => ({
      status: 429,
      headers: { 'retry-after': '0', 'content-type': 'application/json' },
      body: JSON.stringify({ attempt }),
    })
    provider.answer(limited(1), limited(2), limited(3), json({ attempt: 4 }))
    const started = Date.now()
    const response = await providerRequest({
      provider: 'listings',
      url: `${provider.url}/limited`,
      retries: 2,
    })
    expect(response).toMatchObject({ status: 429, body: { attempt: 3 } })
    expect(provider.received).toHaveLength(3)
    // Without Retry-After the backoff would wait 200 ms, then 400 ms.
    expect(Date.now() - started).toBeLessThan(400)
  })

  it('does not retry a 400', async () => {
    provider.answer({ status: 400, body: 'bad field' }, json({ ok: true }))
    const response = await providerRequest({ provider: 'listings', url: `${provider.url}/bad`, retries: 3 })
    expect(response).toMatchObject({ status: 400, body: 'bad field' })
    expect(provider.received).toHaveLength(1)
  })

  it('throws ProviderUnreachable when the provider does not answer in time', async () => {
    const started = Date.now()
    await expect(
      providerRequest({ provider: 'listings', url: `${provider.url}/hang`, timeoutMs: 200, retries: 0 }),
    ).rejects.toThrow(ProviderUnreachable)
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(provider.received).toHaveLength(1)
  })

  it('logs each call with secret and personal query values and headers redacted', async () => {
    const { log, calls } = fakeLogger()
    await providerRequest(
      {
        provider: 'listings',
        url: `${provider.url}/accounts`,
        query: {
          api_key: 'sk-query-secret',
          fb_exchange_token: 'user-token-secret',
          To: '+14155550100',
          limit: 5,
        },
        headers: { authorization: 'Bearer header-secret', 'x-trace': 'visible' },
      },
      log,
    )
    // The provider gets the real secrets; only the log hides them.
    expect(provider.received[0]?.url).toContain('api_key=sk-query-secret')
    expect(provider.received[0]?.headers.authorization).toBe('Bearer header-secret')

    expect(calls).toHaveLength(1)
    const logged = calls[0]?.fields.provider as { url: string; headers: Record<string, string> }
    expect(logged.url).toContain('api_key=[REDACTED]')
    expect(logged.url).toContain('fb_exchange_token=[REDACTED]')
    expect(logged.url).toContain('To=[REDACTED]')
    expect(logged.url).toContain('limit=5')
    expect(logged.headers.authorization).toBe('[REDACTED]')
    expect(logged.headers['x-trace']).toBe('visible')
    expect(JSON.stringify(calls)).not.toMatch(/sk-query-secret|user-token-secret|header-secret|4155550100/)
  })
})

describe("a provider's circuit and bulkhead", () => {
  const provider = new FakeProvider()
  const settings = { failures: 2, halfOpenAfterMs: 200, concurrency: 2, timeoutMs: 1000 }
  const call = (path = '/ok', retries = 0) =>
    providerRequest({ provider: 'square', url: `${provider.url}${path}`, retries })
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      (error: unknown) => error,
    )
  beforeAll(() => provider.start())
  afterAll(() => provider.stop())
  beforeEach(() => {
    provider.reset()
    configureProviderCircuits(settings)
  })
  const stateOf = () => providerCircuitStates().find((circuit) => circuit.provider === 'square')?.state

  it('opens after consecutive 5xx, refuses with when to retry and no call, and closes when a test call succeeds', async () => {
    const { log, calls } = fakeLogger()
    configureProviderCircuits(settings, log)
    provider.answer({ status: 500 }, { status: 503 })
    expect((await call()).status).toBe(500)
    expect((await call()).status).toBe(503)
    expect(stateOf()).toBe(CIRCUIT_STATE_VALUES.open)
    const refused = await refusal(call())
    expect(refused).toBeInstanceOf(ProviderUnavailable)
    expect(refused).toMatchObject({ statusCode: 503, reason: 'circuit_open', retryAfterSeconds: 1 })
    expect(provider.received).toHaveLength(2)
    await vi.waitFor(async () => expect((await call()).status).toBe(200), { interval: 50 })
    expect(stateOf()).toBe(CIRCUIT_STATE_VALUES.closed)
    // Opening and closing are logged once each, the refused calls not at all.
    expect(
      calls.filter((line) => line.message.startsWith('provider circuit')).map((line) => line.level),
    ).toEqual(['warn', 'info'])
  })

  it("does not count a 4xx, the caller's fault, and a success resets the count", async () => {
    provider.answer(
      { status: 500 },
      { status: 400 },
      { status: 404 },
      { status: 500 },
      { status: 200 },
      { status: 500 },
    )
    for (let i = 0; i < 6; i++) await call()
    expect(stateOf()).toBe(CIRCUIT_STATE_VALUES.closed)
  })

  it('counts timeouts, and a failing test call opens the circuit again', async () => {
    configureProviderCircuits({ ...settings, timeoutMs: 100 })
    for (let i = 0; i < 2; i++) expect(await refusal(call('/hang'))).toBeInstanceOf(ProviderUnreachable)
    expect(await refusal(call('/hang'))).toBeInstanceOf(ProviderUnavailable)
    await vi.waitFor(async () => expect(await refusal(call('/hang'))).toBeInstanceOf(ProviderUnreachable), {
      interval: 50,
    })
    expect(stateOf()).toBe(CIRCUIT_STATE_VALUES.open)
    expect(provider.received).toHaveLength(3)
  })

  it('refuses a call beyond PROVIDER_CONCURRENCY in flight at once, without waiting', async () => {
    configureProviderCircuits({ ...settings, timeoutMs: 300 })
    const inFlight = [call('/hang'), call('/hang')].map(refusal)
    expect(await refusal(call())).toMatchObject({ reason: 'busy', retryAfterSeconds: 1 })
    await Promise.all(inFlight)
    expect(provider.received.filter((request) => request.url === '/ok')).toHaveLength(0)
  })

  it('answers a 5xx asking to retry later than a call may wait as it is, without waiting for it', async () => {
    provider.answer({ status: 503, headers: { 'retry-after': '120' } })
    expect((await call('/ok', 2)).status).toBe(503)
    expect(provider.received).toHaveLength(1)
  })
})
