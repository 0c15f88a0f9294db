import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../src/app.js'
import { type Config, loadConfig } from '../../src/config.js'
import { createTestDatabase, type TestDatabase } from './database.js'

export const TEST_JWT_SECRET = 'test-secret-test-secret-test-secret-0123'
export const TEST_ADMIN_TOKEN = 'test-admin-token'

export interface TestApp {
  app: FastifyInstance
  config: Config
  database: TestDatabase
  close(): Promise<void>
}

/** The whole service on the test file's own database, with fixed secrets; `env` overrides the environment. */
export async function buildTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const config = loadConfig({
    NODE_ENV: 'test',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-test-')),
    JWT_SECRET: TEST_JWT_SECRET,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    JOBS_POLLING_INTERVAL_SECONDS: '0.5',
    ...env,
  })
  const database = await createTestDatabase()
  const app = await buildApp(config, { database: database.handle })
  await app.ready()
  return {
    app,
    config,
    database,
    close: async () => {
      await app.close()
      await database.drop()
    },
  }
}

export const adminHeaders = { authorization: `Bearer ${TEST_ADMIN_TOKEN}` }
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
