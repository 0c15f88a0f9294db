import { createServer, type Server } from 'node:http'
import type { FastifyInstance } from 'fastify'
import { Counter, collectDefaultMetrics, Gauge, type Histogram, Registry } from 'prom-client'
import { isSameSecret } from '../crypto/constant-time.js'
import type { ReplicaStatus } from '../db/replicas.js'
import { errorBody } from './envelope.js'
import { RequestDurations } from './request-durations.js'

/** What `/metrics` reads at each scrape, besides what it counts itself. */
export interface MetricsSources {
  jobCounts(): Promise<{ queue: string; state: string; count: number }[]>
  /** The API's database connections; undefined on the embedded database, which has no pool. */
  databasePool(): { total: number; idle: number; waiting: number } | undefined
  /** The database's replicas serving reads (DATABASE_REPLICA_URLS), when there are any. */
  databaseReplicas?: () => ReplicaStatus[]
  /** Each outside provider's circuit: 0 closed, 1 half-open, 2 open (CIRCUIT_STATE_VALUES). */
  providerCircuits(): { provider: string; state: number }[]
}

export interface MetricsSettings {
  /** METRICS_TOKEN: `GET /metrics` on the API's port asks for it as a bearer token. */
  token: string | undefined
  /** METRICS_PORT: `/metrics` on a port of its own, which the API's port then does not serve. */
  port: number | undefined
  host: string
}

/** Seconds; from a fast GET (a few ms) to the slowest requests worth telling apart. */
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

function createRegistry(sources: MetricsSources, app: FastifyInstance): Registry {
  const registry = new Registry()
  // Event-loop lag, heap, RSS, GC and handles, as Node's process metrics are usually named.
  collectDefaultMetrics({ register: registry })
  new Gauge({
    name: 'jobs',
    help: 'Jobs in the job queue, per queue and state (created, retry, active, completed, failed, ...)',
    labelNames: ['queue', 'state'],
    registers: [registry],
    async collect() {
      this.reset()
      // A database that does not answer leaves the gauge empty; the rest of the scrape still answers.
      const counts = await sources.jobCounts().catch((error: unknown) => {
        app.log.warn({ err: error }, 'metrics: job counts unavailable')
        return []
      })
      for (const { queue, state, count } of counts) this.set({ queue, state }, count)
    },
  })
  new Gauge({
    name: 'database_pool_connections',
    help: "The API's PostgreSQL connections: total open, idle, and requests waiting for one",
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const pool = sources.databasePool()
      if (!pool) return
      this.set({ state: 'total' }, pool.total)
      this.set({ state: 'idle' }, pool.idle)
      this.set({ state: 'in_use' }, pool.total - pool.idle)
      this.set({ state: 'waiting' }, pool.waiting)
    },
  })
  if (sources.databaseReplicas) registerReplicaMetrics(registry, sources.databaseReplicas)
  new Gauge({
    name: 'provider_circuit_state',
    help: "Each outside provider's circuit in this instance: 0 closed, 1 half-open (a call is testing it), 2 open (calls refused)",
    labelNames: ['provider'],
    registers: [registry],
    collect() {
      for (const { provider, state } of sources.providerCircuits()) this.set({ provider }, state)
    },
  })
  return registry
}

function registerReplicaMetrics(registry: Registry, replicas: () => ReplicaStatus[]): void {
  const labelNames = ['replica']
  new Gauge({
    name: 'database_replica_in_rotation',
    help: 'Whether each database replica serves reads (1) or is out of the rotation (0: lagging, unreachable)',
    labelNames,
    registers: [registry],
    collect() {
      for (const { name, state } of replicas()) this.set({ replica: name }, state === 'in rotation' ? 1 : 0)
    },
  })
  new Gauge({
    name: 'database_replica_lag_seconds',
    help: 'How far behind the primary each database replica was at its last check (absent while it does not answer)',
    labelNames,
    registers: [registry],
    collect() {
      this.reset()
      for (const { name, lagMs } of replicas())
        if (lagMs !== undefined) this.set({ replica: name }, lagMs / 1000)
    },
  })
  new Counter({
    name: 'database_replica_read_requests_total',
    help: 'Read requests this instance sent to each database replica (the others read on the primary)',
    labelNames,
    registers: [registry],
    collect() {
      this.reset()
      for (const { name, reads } of replicas()) this.inc({ replica: name }, reads)
    },
  })
}

/**
 * Prometheus metrics: each request's duration by route pattern, method and status, and what
 * `MetricsSources` reads at scrape time. Served on METRICS_PORT when set, else at `GET /metrics` behind
 * METRICS_TOKEN; with neither, nothing is measured or served (not even the per-request hook).
 */
export function registerMetrics(
  app: FastifyInstance,
  settings: MetricsSettings,
  sources: MetricsSources,
): void {
  if (!settings.token && settings.port === undefined) return
  const registry = createRegistry(sources, app)
  const durations = new RequestDurations(
    'HTTP requests by route pattern (as registered, `unmatched` when none), method and status',
    DURATION_BUCKETS,
  )
  // The registry reads a metric through `get()`, which prom-client's own metrics and this one share.
  registry.registerMetric(durations as unknown as Histogram)
  app.addHook('onResponse', (request, reply, done) => {
    durations.observe(
      request.routeOptions.url ?? 'unmatched',
      request.method,
      reply.statusCode,
      reply.elapsedTime / 1000,
    )
    done()
  })

  if (settings.port !== undefined) {
    const server = servedApart(registry, app)
    app.addHook('onListen', (done) => {
      server.once('error', done)
      server.listen(settings.port, settings.host, () => done())
    })
    app.addHook('onClose', (_instance, done) => {
      server.close(() => done())
    })
    return
  }
  const expected = `Bearer ${settings.token as string}`
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!isSameSecret(request.headers.authorization, expected)) {
      return reply.status(401).send(errorBody(401, 'METRICS_TOKEN required as a bearer token'))
    }
    return reply.type(registry.contentType).send(await registry.metrics())
  })
}

/** `/metrics` alone on METRICS_PORT, for a port that only the monitoring network reaches. */
function servedApart(registry: Registry, app: FastifyInstance): Server {
  return createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404).end()
      return
    }
    registry.metrics().then(
      (text) => response.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => {
        app.log.error({ err: error }, 'metrics scrape failed')
        response.writeHead(500).end()
      },
    )
  })
}
