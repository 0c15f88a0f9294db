import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { buildApp } from '../src/app.js'
import { loadConfig } from '../src/config.js'
import { type FakeSocketService, startFakeSocketService } from './fakes/socket-service.js'
import { TEST_ADMIN_TOKEN, TEST_JWT_SECRET } from './helpers/app.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'

const ACCOUNT = '650000000000000000000001'

/** An API-only process (RUN_WORKERS=false) and a worker process (as `npm run worker`) on one database. */
describe('workers scaled apart from the API', () => {
  let database: TestDatabase
  let api: FastifyInstance
  let worker: FastifyInstance | undefined
  let socketService: FakeSocketService
  const config = (runWorkers: string) =>
    loadConfig({
      NODE_ENV: 'test',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-workers-')),
      JWT_SECRET: TEST_JWT_SECRET,
      ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      JOBS_POLLING_INTERVAL_SECONDS: '0.5',
      CONVERSATION_SOCKET_URL: socketService.url,
      RUN_WORKERS: runWorkers,
    })

  beforeAll(async () => {
    socketService = await startFakeSocketService()
    database = await createTestDatabase()
    api = await buildApp(config('false'), { database: database.handle })
    await api.ready()
  })
  afterAll(async () => {
    await worker?.close()
    await api.close()
    await database.drop()
    await socketService.close()
  })

  it('leaves jobs to the worker process', async () => {
    await api.platform.events.emit(api.platform.db, ACCOUNT, 'message', { id: 'm1' })
    // Three polling intervals of the API's queue: it would have taken the job by now if it ran workers.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    expect(socketService.emitted()).toEqual([])

    worker = await buildApp(config('true'), { database: database.handle })
    await worker.ready()
    await vi.waitFor(() => expect(socketService.emitted()).toHaveLength(1), {
      timeout: 10_000,
      interval: 100,
    })
    expect(socketService.emitted()[0]).toMatchObject({ event: 'message', data: { id: 'm1' } })
  })
})
