import { mkdtempSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { type BuildOptions, buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { createTestDatabase, type TestDatabase } from './database.js'

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123'
/** As long as production requires (config.ts), so that production-mode tests start with it. */
export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789abcdef'

/**
 * How a test app is built besides its environment: `logStream` receives its log lines (see captureLogs),
 * `onDeferredCompilation` every route schema's compilation (see compiled-on-first-use.ts).
 */
export type TestAppOptions = Pick<BuildOptions, 'logStream' | 'onDeferredCompilation'>

export interface TestApp {
  app: FastifyInstance
  config: Config
  database: TestDatabase
  close(): Promise<void>
}

/** Log lines of a test app, parsed: give `stream` to buildTestApp and read `lines`. */
export function captureLogs() {
  const lines: Record<string, unknown>[] = []
  return { lines, stream: { write: (line: string) => void lines.push(JSON.parse(line)) } }
}

/**
 * The whole service on the test file's own database, with fixed secrets; `env` overrides the environment.
 */
export async function buildTestApp(
  env: Record<string, string> = {},
  options: TestAppOptions = {},
): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-test-')),
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    JOBS_POLLING_INTERVAL_SECONDS: '0.5',
    // Tests drive one account far past any real client (the fuzz: 10,000 calls in 30 s, races of many requests
    // at once), as the benches do: the budget and the account's turns are counted on every request, and reached
    // only where a test sets them (request-budget.test.ts, account-concurrency.test.ts).
    ACCOUNT_REQUEST_BUDGET: '1000000',
    ACCOUNT_CONCURRENCY: '1000',
    ...env,
  })
  const database = await createTestDatabase({
    waits: config.databaseWaits,
    ...(env.DATABASE_POOL_SIZE && { poolSize: config.databasePoolSize }),
  })
  let app: FastifyInstance
  try {
    app = await buildApp(config, { ...options, database: database.handle })
    await app.ready()
  } catch (error) {
    // A service that refuses its configuration leaves no database behind.
    await database.drop()
    throw error
  }
  return {
    app,
    config,
    database,
    // The database is dropped even when closing fails (a test that closed the database itself).
    close: async () => {
      try {
        await app.close()
      } finally {
        await database.drop()
      }
    },
  }
}

/** Another instance of the service on the same database (and the same Redis when the config names one). */
export async function anotherInstance(t: TestApp): Promise<FastifyInstance> {
  const app = await buildApp(t.config, { database: t.database.handle })
  await app.ready()
  return app
}

/**
 * The service twice on one database and the machine's Redis (REDIS_URL): `run` gets both instances, and both
 * are closed after it, whatever it did.
 */
export async function withTwoInstancesSharingRedis<T>(
  env: Record<string, string>,
  run: (t: TestApp, other: FastifyInstance) => Promise<T>,
): Promise<T> {
  const t = await buildTestApp({ ...env, REDIS_URL: process.env.REDIS_URL as string })
  try {
    const other = await anotherInstance(t)
    try {
      return await run(t, other)
    } finally {
      await other.close()
    }
  } finally {
    await t.close()
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

/**
 * The test app listening on 127.0.0.1, its PUBLIC_BASE_URL (the OAuth issuer, the pages' form actions)
 * the address it listens on, for clients that follow the URLs the service gives: browsers, OAuth libraries.
 */
export async function listenTestApp(
  env: Record<string, string> = {},
): Promise<TestApp & { baseUrl: string }> {
  // The base URL is read when the app is built, before it listens: a free port is taken first, and taken
  // again in the rare case another process got to it in between.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort()
    const baseUrl = `http://127.0.0.1:${port}`
    const t = await buildTestApp({ PORT: String(port), PUBLIC_BASE_URL: baseUrl, ...env })
    try {
      await t.app.listen({ host: '127.0.0.1', port })
      return { ...t, baseUrl }
    } catch (error) {
      await t.close()
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt >= 5) throw error
    }
  }
}

export const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
