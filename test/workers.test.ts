import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import type { EmittedEvent } from '../src/platform/events/emit.js'
import { TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'

const ACCOUNT = '650000000000000000000001'

/** An API-only process (RUN_WORKERS=false) and a worker process (as `npm run worker`) on one database. */
describe('workers scaled apart from the API', () => {
  let database: TestDatabase
  let api: FastifyInstance
  let worker: FastifyInstance | undefined
  const config = (runWorkers: string) =>
    loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-workers-')),
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      JOBS_POLLING_INTERVAL_SECONDS: '0.5',
      RUN_WORKERS: runWorkers,
    })

  beforeAll(async () => {
    database = await createTestDatabase()
    api = await buildApp(config('false'), { database: database.handle })
    await api.ready()
  })
  afterAll(async () => {
    await worker?.close()
    await api.close()
    await database.drop()
  })

  it('leaves jobs to the worker process', async () => {
    const apiDelivered: EmittedEvent[] = []
    api.platform.events.onLocal((event) => apiDelivered.push(event))
    await api.platform.events.emit(api.platform.db, ACCOUNT, 'message', { id: 'm1' })

    worker = await buildApp(config('true'), { database: database.handle })
    const workerDelivered: EmittedEvent[] = []
    worker.platform.events.onLocal((event) => workerDelivered.push(event))
    await worker.ready()

    await vi.waitFor(() => expect(workerDelivered).toHaveLength(1), { timeout: 10_000, interval: 100 })
    expect(workerDelivered[0]).toMatchObject({ event: 'message', data: { id: 'm1' } })
    expect(apiDelivered).toHaveLength(0)
  })
})
