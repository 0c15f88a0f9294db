import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { BaselineResponse } from './baseline.js'
import { freePort, registerStop, startNode, stopChild, waitUntilAnswers } from './children.js'
import { createBenchDatabase } from './postgres.js'
import type { ServerEnv, Target } from './scenario.js'

const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url))
const HOST = '127.0.0.1'
// PGlite creates and migrates its database on the first start: a few seconds on a slow machine.
const SERVER_START_TIMEOUT_MS = 60_000
const BASELINE_START_TIMEOUT_MS = 10_000

export interface RunningServer extends Target {
  stop(): Promise<void>
}

export interface RunningBaseline {
  baseUrl: string
  stop(): Promise<void>
}

/**
 * The real server as `npm start` runs it (minus npm), in production mode on an empty embedded
 * database, or with `postgres` on a fresh PostgreSQL database created for the run and dropped after.
 * The environment is built from scratch so that no DATABASE_URL or REDIS_URL of the caller's shell
 * changes what is measured; it holds every secret production requires, generated for the run.
 */
export async function startServer(options: { postgres: boolean; env?: ServerEnv }): Promise<RunningServer> {
  const scenarioEnv = typeof options.env === 'function' ? await options.env() : options.env
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-data-'))
  const port = await freePort()
  const database = options.postgres ? await createBenchDatabase() : undefined
  const adminToken = randomBytes(24).toString('hex')
  const baseUrl = `http://${HOST}:${port}`
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    NODE_ENV: 'production',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: adminToken,
    JWT_SECRET: randomBytes(32).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    OAUTH_SIGNING_KEY: newSigningKey(),
    EDGE_SIGNING_SECRET: randomBytes(32).toString('hex'),
    PUBLIC_BASE_URL: baseUrl,
    LOG_LEVEL: 'warn',
    PORT: String(port),
    HOST,
    ...(database && { DATABASE_URL: database.url }),
    ...scenarioEnv,
  }
  const child = startNode('server', 'src/main.ts', { cwd: REPO_ROOT, env })
  const stop = registerStop(async () => {
    await stopChild(child)
    await rm(dataDir, { recursive: true, force: true })
    await database?.drop()
  })
  await waitUntilAnswers(child, `${baseUrl}/status`, SERVER_START_TIMEOUT_MS)
  return { baseUrl, adminToken, stop, ...(database && { databaseUrl: database.url }) }
}

/** A P-256 private key (PKCS #8 PEM) signing the run's OAuth access tokens. */
const newSigningKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string

/** The bare `node:http` baseline (bench/baseline.ts) repeating `response`. */
export async function startBaseline(response: BaselineResponse): Promise<RunningBaseline> {
  const port = await freePort()
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, BASELINE_PORT: String(port) }
  const child = startNode('baseline', 'bench/baseline.ts', { cwd: REPO_ROOT, env })
  const stop = registerStop(() => stopChild(child))
  child.process.send(response)
  const baseUrl = `http://${HOST}:${port}`
  await waitUntilAnswers(child, `${baseUrl}/`, BASELINE_START_TIMEOUT_MS)
  return { baseUrl, stop }
}
