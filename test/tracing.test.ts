import { spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT_CONTEXT, SamplingDecision, SpanKind, trace } from '@opentelemetry/api'
import { TraceIdRatioBasedSampler } from '@opentelemetry/sdk-trace-node'
import { describe, expect, it, vi } from 'vitest'
import { ConfigError, loadConfig } from '../src/config.js'
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from './fakes/otlp-receiver.js'
import { captureLogs, freePort } from './helpers/app.js'
import { eventually } from './helpers/jobs.js'
import { emailFor, graphLead, leadEvent, leadsEnv, seller, signedLeadPost } from './helpers/leads.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'
import { watchProcess } from './helpers/processes.js'
import { test as tenantTest } from './helpers/tenant-test.js'

/** The standard variables a deployment sets: the collector, its encoding, a service name, a short batch. */
const tracingEnv = (receiver: OtlpReceiver): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'platform-api-test',
  OTEL_BSP_SCHEDULE_DELAY: '50',
})

// biome-ignore lint/correctness/noEmptyPattern: vitest reads a fixture's dependencies from this pattern
const test = tenantTest.extend('otlp', { scope: 'file' }, async ({}, { onCleanup }) => {
  const receiver = await startOtlpReceiver()
  onCleanup(() => receiver.close())
  return receiver
})
test.override('appEnv', ({ graph, otlp }) => {
  const env = tracingEnv(otlp)
  // The SDK reads OTEL_* from the process's environment; the app's config only decides whether it starts.
  for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value)
  return {
    ...leadsEnv(graph.url),
    ...env,
    // Each request's line, to find its trace ids in.
    LOG_LEVEL: 'info',
    ...(process.env.REDIS_URL && { REDIS_URL: process.env.REDIS_URL }),
  }
})
const logs = captureLogs()
test.override('appOptions', { logStream: logs.stream })

/** The ids of a span's parent, its parent's parent, and so on, within the spans received. */
function ancestorsOf(span: ReceivedSpan, spans: ReceivedSpan[]): string[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]))
  const ancestors: string[] = []
  for (let id = span.parentSpanId; id; id = byId.get(id)?.parentSpanId) ancestors.push(id)
  return ancestors
}

/** The one span received that matches, once it has come. */
const received = (otlp: OtlpReceiver, matches: (span: ReceivedSpan) => boolean) =>
  eventually(() => {
    const found = otlp.spans().filter(matches)
    expect(found).toHaveLength(1)
    return found[0] as ReceivedSpan
  })

describe('the tracing settings', () => {
  const tracingOf = (env: Record<string, string>) =>
    loadConfig({ NODE_ENV: 'test', DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-config-')), ...env })
      .tracing
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }

  it('are off without an endpoint, and when the standard switches say so with one', () => {
    expect(tracingOf({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }).enabled).toBe(false)
    expect(tracingOf(endpoint)).toEqual({ enabled: true, protocol: 'http/protobuf' })
    expect(tracingOf({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' }).enabled).toBe(
      true,
    )
    expect(tracingOf({ ...endpoint, OTEL_SDK_DISABLED: 'true' }).enabled).toBe(false)
    expect(tracingOf({ ...endpoint, OTEL_TRACES_EXPORTER: 'none' }).enabled).toBe(false)
  })

  it('take the traces protocol over the general one, and refuse grpc and a bad endpoint at start', () => {
    const json = {
      ...endpoint,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/json',
    }
    expect(tracingOf(json).protocol).toBe('http/json')
    expect(() => tracingOf({ ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(
      new ConfigError('OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json'),
    )
    expect(() => tracingOf({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError)
  })
})

describe('tracing, with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  test('one trace follows a request into the job it queued and the provider call that job made', async ({
    t,
    graph,
    owner,
    otlp,
  }) => {
    // Creating the campaign queues its first sync, a job that reads the form's leads from Graph.
    const page = await seller(t, graph, owner)

    const request = await received(
      otlp,
      (span) => span.kind === 'server' && span.attributes['http.route'] === '/v1/e/socialnet/campaigns',
    )
    expect(request.name).toBe('POST /v1/e/socialnet/campaigns')
    expect(request.attributes).toMatchObject({
      'http.request.method': 'POST',
      'url.path': '/v1/e/socialnet/campaigns',
      'http.response.status_code': 201,
      'platform.account_id': owner.accountId,
    })
    expect(request.resource['service.name']).toBe('platform-api-test')
    const inTrace = () => otlp.spans().filter((span) => span.traceId === request.traceId)

    const job = await received(
      otlp,
      (span) => span.traceId === request.traceId && span.name === 'process leads.sync-campaign',
    )
    expect(job.kind).toBe('consumer')
    expect(ancestorsOf(job, inTrace())).toContain(request.spanId)

    const providerCall = await received(
      otlp,
      (span) =>
        span.traceId === request.traceId &&
        span.kind === 'client' &&
        String(span.attributes['url.full']).includes(`/${page.formId}/leads`),
    )
    expect(ancestorsOf(providerCall, inTrace())).toContain(job.spanId)
    expect(providerCall.attributes).toMatchObject({
      'http.request.method': 'GET',
      'server.address': '127.0.0.1',
    })

    const queries = inTrace().filter((span) => span.attributes['db.system.name'] === 'postgresql')
    expect(queries.map((span) => span.attributes['db.operation.name'])).toEqual(
      expect.arrayContaining(['SELECT', 'INSERT']),
    )
    // Statements with their $n placeholders, never the values: the form id was a parameter of the insert.
    expect(queries.some((span) => String(span.attributes['db.query.text']).includes('$1'))).toBe(true)
    expect(JSON.stringify(queries)).not.toContain(page.formId)
    // Nor any secret anywhere: Graph's access_token is redacted from the call's URL as it is in the logs.
    expect(JSON.stringify(inTrace())).not.toContain(page.userToken)
    expect(JSON.stringify(inTrace())).not.toContain(page.pageToken)
  })

  test('a job queued soon, in a batch, and the job it queues in turn stay in the trace of the request', async ({
    t,
    graph,
    owner,
    otlp,
  }) => {
    const page = await seller(t, graph, owner)
    const leadgenId = graphLead(graph, page, { email: emailFor('ada'), full_name: 'Ada Lovelace' })
    const event = leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }])
    expect((await t.app.inject(signedLeadPost(event))).body).toBe('EVENT_RECEIVED')

    const request = await received(
      otlp,
      (span) => span.kind === 'server' && span.attributes['http.route'] === '/webhooks/socialnet/leads',
    )
    // The capture job reads the lead from Graph.
    const providerCall = await received(
      otlp,
      (span) => span.kind === 'client' && String(span.attributes['url.full']).includes(`/${leadgenId}?`),
    )
    expect(providerCall.traceId).toBe(request.traceId)
    // A span is exported when it ends: the job's own span, after the call it makes.
    await eventually(() => {
      const spans = otlp.spans()
      const nameOf = (id: string) => spans.find((span) => span.spanId === id)?.name
      expect(ancestorsOf(providerCall, spans).map(nameOf)).toEqual([
        'process leads.capture-lead',
        'send leads.capture-lead',
        'process leads.webhook-event',
        'POST /webhooks/socialnet/leads',
      ])
    })
  })

  test('a request continues the trace its caller sends in traceparent', async ({ t, otlp }) => {
    const traceId = '0af7651916cd43dd8448eb211c80319c'
    await t.app.inject({ url: '/status', headers: { traceparent: `00-${traceId}-b7ad6b7169203331-01` } })
    const span = await received(otlp, (each) => each.traceId === traceId)
    expect(span).toMatchObject({ kind: 'server', parentSpanId: 'b7ad6b7169203331', name: 'GET /status' })
  })

  test('log lines name the span they were written in: the request line its request span', async ({
    t,
    otlp,
  }) => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    await t.app.inject({ url: '/status', headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
    const span = await received(otlp, (each) => each.traceId === traceId)
    const line = logs.lines.find((each) => each.route === '/status' && each.trace_id === traceId)
    expect(line).toMatchObject({ trace_id: traceId, span_id: span.spanId, status: 200 })
    // Outside any request or job, no ids.
    t.app.log.info('between requests')
    expect(logs.lines.find((each) => each.msg === 'between requests')).not.toHaveProperty('trace_id')
  })

  test('an unsampled request starts one span, its own, and none for its queries', async ({ t, owner }) => {
    // The SDK's tracer for our name is the one the service started its spans with (the provider keeps one).
    const started = vi.spyOn(trace.getTracer('platform-backend'), 'startSpan')
    const listContacts = (flags: string) =>
      t.app.inject({
        url: '/v1/contacts',
        headers: { ...owner.headers, traceparent: `00-${'ab'.repeat(16)}-${'cd'.repeat(8)}-${flags}` },
      })
    try {
      // The caller decided not to sample (flags 00): the parent-based sampler follows it.
      expect((await listContacts('00')).statusCode).toBe(200)
      expect(started).toHaveBeenCalledTimes(1)
      started.mockClear()
      // Sampled, the same request's queries are spans of it.
      expect((await listContacts('01')).statusCode).toBe(200)
      expect(
        started.mock.calls.filter(([, options]) => options?.kind === SpanKind.CLIENT).length,
      ).toBeGreaterThan(0)
    } finally {
      started.mockRestore()
    }
  })

  test.runIf(process.env.REDIS_URL)(
    'Redis commands are spans of the request, named by command only',
    async ({ t, owner, otlp }) => {
      // The send route's rate limit counts in Redis (a preHandler) before the handler finds no credits.
      const payload = {
        subject: 'Hello',
        sender: { email: 'agency@example.com' },
        recipients: [{ email: 'lead@example.com' }],
        content: [{ type: 'text/plain', value: 'Hello' }],
        origin: 'campaign',
      }
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/e/mailprovider/mail',
        headers: owner.headers,
        payload,
      })
      expect(response.json().message).toBe('Insufficient balance')
      const request = await received(
        otlp,
        (span) => span.kind === 'server' && span.attributes['http.route'] === '/v1/e/mailprovider/mail',
      )
      const commands = await eventually(() => {
        const found = otlp
          .spans()
          .filter((span) => span.traceId === request.traceId && span.attributes['db.system.name'] === 'redis')
        expect(found.length).toBeGreaterThan(0)
        return found
      })
      for (const command of commands) {
        expect(ancestorsOf(command, otlp.spans())).toContain(request.spanId)
        expect(Object.keys(command.attributes).sort()).toEqual(
          ['db.operation.name', 'db.system.name', 'server.address', 'server.port'].sort(),
        )
      }
    },
  )
})

/**
 * Prints, as the process exits, the @opentelemetry packages it loaded: all are CommonJS, so each file loaded
 * is in require's cache.
 */
const PRINT_OPENTELEMETRY_PACKAGES = `data:text/javascript,${encodeURIComponent(`
import { createRequire } from 'node:module'
const { cache } = createRequire(process.cwd() + '/')
process.on('exit', () => {
  const names = Object.keys(cache).map((file) => /node_modules\\/(@opentelemetry\\/[^/]+)/.exec(file)?.[1])
  process.stderr.write('opentelemetry packages: ' + [...new Set(names.filter(Boolean))].sort().join(' ') + '\\n')
})
`)}`

/** The @opentelemetry packages the server's process loaded, as the preload printed them. */
const packagesLoaded = (output: string) =>
  /opentelemetry packages: (.*)\n/.exec(output)?.[1]?.split(' ').filter(Boolean)

/**
 * A compiled server on a data directory of its own creates its embedded database first: 30–40 s on a quiet
 * machine, more while the suite's other files take the cores.
 */
const FRESH_EMBEDDED_START_MS = 120_000

/** The compiled server on the embedded database, started, asked for /status `requests` times, stopped: its output. */
async function serveOnce(settings: Record<string, string>, requests = 1): Promise<string> {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-tracing-'))
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', PORT: String(port), DATA_DIR: dataDir }
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'REDIS_URL']) delete env[name]
  for (const name of Object.keys(env)) if (name.startsWith('OTEL_')) delete env[name]
  const child = spawn(
    process.execPath,
    ['--import', PRINT_OPENTELEMETRY_PACKAGES, join(PROJECT_ROOT, 'dist/main.js')],
    { cwd: dataDir, env: { ...env, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] },
  )
  const server = watchProcess(child)
  try {
    await server.printed('listening on', FRESH_EMBEDDED_START_MS)
    for (let sent = 0; sent < requests; sent++)
      expect((await fetch(`http://127.0.0.1:${port}/status`)).status).toBe(200)
  } finally {
    // Also when it never listened or answered: a failed test leaves no server behind.
    child.kill('SIGTERM')
    await server.exited
  }
  return server.output()
}

describe('the compiled server', { timeout: FRESH_EMBEDDED_START_MS + 60_000 }, () => {
  test('loads no @opentelemetry package when no OTLP endpoint is set', async () => {
    // Only the API, which prom-client requires for its CPU metric's exemplars whether tracing is on or not.
    expect(packagesLoaded(await serveOnce({}))).toEqual(['@opentelemetry/api'])
  })

  test('exports its spans when one is set', async ({ otlp }) => {
    const output = await serveOnce({
      ...tracingEnv(otlp),
      OTEL_SERVICE_NAME: 'platform-compiled',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment.name=test',
    })
    expect(packagesLoaded(output)).toEqual(
      expect.arrayContaining(['@opentelemetry/sdk-trace-node', '@opentelemetry/exporter-trace-otlp-http']),
    )
    const span = await received(
      otlp,
      (each) => each.resource['service.name'] === 'platform-compiled' && each.kind === 'server',
    )
    expect(span.name).toBe('GET /status')
    expect(span.resource['deployment.environment.name']).toBe('test')
  })

  test('samples by OTEL_TRACES_SAMPLER as the SDK would, on the trace id its log lines carry', async ({
    otlp,
  }) => {
    const requests = 40
    const output = await serveOnce(
      {
        ...tracingEnv(otlp),
        OTEL_SERVICE_NAME: 'platform-ratio',
        OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        OTEL_TRACES_SAMPLER_ARG: '0.5',
        LOG_LEVEL: 'info',
      },
      requests,
    )
    const logged = output
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { route?: string; trace_id?: string })
      .filter((line) => line.route === '/status')
      .map((line) => line.trace_id)
    expect(logged).toHaveLength(requests)
    const ratio = new TraceIdRatioBasedSampler(0.5)
    const sampled = (traceId: string) =>
      ratio.shouldSample(ROOT_CONTEXT, traceId).decision === SamplingDecision.RECORD_AND_SAMPLED
    const expected = (logged as string[]).filter(sampled).sort()
    // Some of each, so that both the service's decision and the SDK's are exercised.
    expect(expected.length).toBeGreaterThan(0)
    expect(expected.length).toBeLessThan(requests)
    const exported = await eventually(() => {
      const found = otlp
        .spans()
        .filter((span) => span.resource['service.name'] === 'platform-ratio' && span.kind === 'server')
      expect(found).toHaveLength(expected.length)
      return found
    })
    expect(exported.map((span) => span.traceId).sort()).toEqual(expected)
  })
})
