import type { ChildProcess } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadConfig } from '../src/config.js'
import type { BaselineResponse } from './baseline.js'
import { freePort, registerStop, startNode, stopChild, waitUntilAnswers } from './children.js'
import { createBenchDatabase } from './postgres.js'
import type { ServerEnv, Target } from './scenario.js'
import type { StartCommand } from './start-command.js'

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOST = '127.0.0.1'
/**
 * The node that runs the server: BENCH_NODE (another Node.js release, to compare runtimes in one run), else
 * the bench's own. The baseline and autocannon stay on the bench's node, so that only the server changes.
 */
export const SERVER_NODE = process.env.BENCH_NODE || process.execPath
// PGlite creates and migrates its database on the first start: a few seconds on a slow machine.
const SERVER_START_TIMEOUT_MS = 60_000
const BASELINE_START_TIMEOUT_MS = 10_000

export interface RunningServer extends Target {
  /** The server's process id (signals to the SQL recorder). */
  pid: number | undefined
  /** The server's process: its IPC channel reaches what a scenario preloads into it. */
  process: ChildProcess
  stop(): Promise<void>
}

export interface RunningBaseline {
  baseUrl: string
  pid: number | undefined
  stop(): Promise<void>
}

export interface ServerOptions {
  /** `scripts.start` of package.json (its `prestart` already run). */
  start: StartCommand
  postgres: boolean
  env?: ServerEnv
  /** `taskset -c` list to keep the server on. */
  cpus?: string
  /** A module to preload (`--import`, a `file:` URL) before the start command's flags, and its environment. */
  preload?: { url: string; env: Record<string, string> }
  /** The node to run instead of SERVER_NODE (a wrapper that runs it under a profiler), and its start's bound. */
  node?: string
  startTimeoutMs?: number
}

/**
 * The real server as `npm start` runs it (minus npm: the node command of `scripts.start`), in production
 * mode on an empty embedded database, or with `postgres` on a fresh PostgreSQL database created for the
 * run and dropped after. The environment is built from scratch so that no DATABASE_URL or REDIS_URL of the
 * caller's shell changes what is measured; it holds every secret production requires, generated for the run.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const [server] = await startInstances(options, 1)
  return server as RunningServer
}

/**
 * `count` instances of the server, each as `startServer` starts one, sharing the run's database and secrets
 * (a token one mints, the others accept) and each with its own port and data directory. The database is
 * dropped once the last of them has stopped.
 */
export async function startInstances(options: ServerOptions, count: number): Promise<RunningServer[]> {
  const scenarioEnv = typeof options.env === 'function' ? await options.env() : options.env
  const database = options.postgres ? await createBenchDatabase() : undefined
  const adminToken = randomBytes(24).toString('hex')
  const shared: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    ADMIN_TOKEN: adminToken,
    JWT_SECRET: randomBytes(32).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    OAUTH_SIGNING_KEY: newSigningKey(),
    EDGE_SIGNING_SECRET: randomBytes(32).toString('hex'),
    SENDGRID_WEBHOOK_PUBLIC_KEY: newEventWebhookKey(),
    // As production runs, behind a TLS proxy (here on loopback): see VIA_TLS_PROXY.
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'warn',
    // No load balancer to drain: stopped, the server closes at once instead of serving on for 5 s.
    SHUTDOWN_DELAY_MS: '0',
    // A bench drives one account far past any real client (the light GET: 20,000 requests a second, on 100
    // connections). The budget and the account's turns are still counted on every request, as in production,
    // and never reached; a scenario that measures them sets its own (its env, or the admin API's
    // `PUT /v1/admin/accounts/:id/request-budget`).
    ACCOUNT_REQUEST_BUDGET: '1000000000',
    ACCOUNT_CONCURRENCY: '1000',
    HOST,
    ...(database && { DATABASE_URL: database.url }),
    ...scenarioEnv,
    ...options.preload?.env,
  }
  // Instances started and not yet stopped: the database goes with the last, also when a later one fails.
  let running = 0
  const lifetime = {
    started: () => {
      running++
    },
    stopped: async () => {
      if (--running === 0) await database?.drop()
    },
  }
  const instances: RunningServer[] = []
  try {
    for (let i = 0; i < count; i++) instances.push(await startInstance(options, shared, lifetime))
  } catch (error) {
    if (running === 0) await database?.drop()
    throw error
  }
  return instances
}

/** One instance on the shared environment, its own port and data directory, `lifetime` told of both ends. */
async function startInstance(
  options: ServerOptions,
  shared: NodeJS.ProcessEnv,
  lifetime: { started(): void; stopped(): Promise<void> },
): Promise<RunningServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-data-'))
  const port = await freePort()
  const baseUrl = `http://${HOST}:${port}`
  const env: NodeJS.ProcessEnv = {
    ...shared,
    DATA_DIR: dataDir,
    PUBLIC_BASE_URL: baseUrl,
    PORT: String(port),
  }
  const { start } = options
  const preload = options.preload ? ['--import', options.preload.url] : []
  // From the run's own directory: src/lifecycle.ts reads a `.env` of the working directory, and one in the
  // repository would add to the environment the bench builds from scratch.
  const child = startNode('server', [...preload, ...start.nodeArgs], {
    cwd: dataDir,
    env,
    cpus: options.cpus,
    node: options.node ?? SERVER_NODE,
  })
  lifetime.started()
  let stopping = false
  // An instance that dies under the load is not otherwise seen: its clients and CPU share just vanish.
  void child.exited.then(() => {
    if (!stopping)
      process.stderr.write(
        `bench: the server on ${baseUrl} exited during the run; its last output:\n${child.output()}\n`,
      )
  })
  const stop = registerStop(async () => {
    stopping = true
    await stopChild(child)
    await rm(dataDir, { recursive: true, force: true })
    await lifetime.stopped()
  })
  await waitUntilAnswers(child, `${baseUrl}/status`, options.startTimeoutMs ?? SERVER_START_TIMEOUT_MS)
  return {
    baseUrl,
    adminToken: String(env.ADMIN_TOKEN),
    pid: child.process.pid,
    process: child.process,
    stop,
    databasePoolSize: loadConfig(env).databasePoolSize,
    ...(env.DATABASE_URL && { databaseUrl: env.DATABASE_URL }),
  }
}

/** A P-256 private key (PKCS #8 PEM) signing the run's OAuth access tokens. */
/** A P-256 public key as SendGrid gives it (base64 DER), for a run that posts no SendGrid events. */
const newEventWebhookKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .publicKey.export({ type: 'spki', format: 'der' })
    .toString('base64')

const newSigningKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string

/**
 * A bare baseline (bench/baseline.ts) repeating `response`, on the bench's node or on `node` (a wrapper that
 * runs it under a profiler), which may take `startTimeoutMs` to answer.
 */
export async function startBaseline(
  response: BaselineResponse,
  cpus?: string,
  under?: { node: string; startTimeoutMs: number },
): Promise<RunningBaseline> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, BASELINE_PORT: String(port) }
  const child = startNode('baseline', ['--import', 'tsx', 'bench/baseline.ts'], {
    cwd: REPO_ROOT,
    env,
    cpus,
    ...(under && { node: under.node }),
  })
  const stop = registerStop(() => stopChild(child))
  child.process.send(response)
  const baseUrl = `http://${HOST}:${port}`
  await waitUntilAnswers(child, `${baseUrl}/`, under?.startTimeoutMs ?? BASELINE_START_TIMEOUT_MS)
  return { baseUrl, pid: child.process.pid, stop }
}

/** An OTLP/HTTP collector that answers every export 200: only what the service spends on spans is measured. */
export const startOtlpSink = (): Promise<RunningBaseline> =>
  startBaseline({
    status: 200,
    contentType: 'application/json',
    bodyBase64: '',
    headers: {},
    method: 'POST',
    path: '/v1/traces',
  })

/** The server's tracing at `ratio` (OTEL_TRACES_SAMPLER, as a deployment sets it), exporting to `sink`. */
export const tracingEnv = (sink: string, ratio: number | string): Record<string, string> => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: sink,
  OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
  OTEL_TRACES_SAMPLER_ARG: String(ratio),
})
