import { sql } from 'drizzle-orm'
import { jwtVerify } from 'jose'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { type FakeSocketService, startFakeSocketService } from '../../../test/fakes/socket-service.js'
import { buildTestApp, TEST_JWT_SECRET, type TestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { inTransaction } from '../db/transaction.js'
import { EMIT_JOB } from './emit.js'

const ACCOUNT = '650000000000000000000001'

describe('emit to the conversation socket service', () => {
  let socket: FakeSocketService
  let t: TestApp
  beforeAll(async () => {
    socket = await startFakeSocketService()
    t = await buildTestApp({ CONVERSATION_SOCKET_URL: socket.url })
  })
  afterAll(async () => {
    await t.close()
    await socket.close()
  })

  const emitsOf = (event: string) => socket.requests.filter((r) => JSON.parse(r.body).event === event)

  it('posts { event, data } with a service JWT and x-account-id once the transaction commits', async () => {
    const { db, events } = t.app.platform
    await inTransaction(db, (tx) => events.emit(tx, ACCOUNT, 'room:created', { room: { _id: 'r1' } }))
    await vi.waitFor(() => expect(emitsOf('room:created')).toHaveLength(1), {
      timeout: 10_000,
      interval: 100,
    })
    const [request] = emitsOf('room:created')
    expect(JSON.parse(request?.body ?? '')).toEqual({ event: 'room:created', data: { room: { _id: 'r1' } } })
    expect(request?.headers['x-account-id']).toBe(ACCOUNT)
    const token = request?.headers.authorization?.replace('Bearer ', '') ?? ''
    const { payload } = await jwtVerify(token, new TextEncoder().encode(TEST_JWT_SECRET))
    expect(payload).toMatchObject({ account_id: ACCOUNT, type: 'service' })
  })

  it('drops the event when the transaction rolls back', async () => {
    const { db, events } = t.app.platform
    await expect(
      inTransaction(db, async (tx) => {
        await events.emit(tx, ACCOUNT, 'room:rolled-back', {})
        throw new Error('write failed')
      }),
    ).rejects.toThrow('write failed')
    await events.emit(db, ACCOUNT, 'room:after', {})
    await vi.waitFor(() => expect(emitsOf('room:after')).toHaveLength(1), { timeout: 10_000, interval: 100 })
    expect(emitsOf('room:rolled-back')).toHaveLength(0)
  })

  it('retries when the socket service fails, with the same Idempotency-Key', async () => {
    socket.failNext(1)
    await t.app.platform.events.emit(t.app.platform.db, ACCOUNT, 'room:retried', { n: 1 })
    await vi.waitFor(() => expect(emitsOf('room:retried')).toHaveLength(2), {
      timeout: 20_000,
      interval: 200,
    })
    const keys = emitsOf('room:retried').map((request) => request.headers['idempotency-key'])
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/)
    expect(keys[1]).toBe(keys[0])
    await t.app.platform.events.emit(t.app.platform.db, ACCOUNT, 'room:retried', { n: 2 })
    await vi.waitFor(() => expect(emitsOf('room:retried')).toHaveLength(3), {
      timeout: 10_000,
      interval: 100,
    })
    expect(emitsOf('room:retried')[2]?.headers['idempotency-key']).not.toBe(keys[0])
  })
})

describe('emit without a socket service', () => {
  test('queues nothing, since no one would receive it', async ({ t }) => {
    const { db, events } = t.app.platform
    await events.emit(db, ACCOUNT, 'joinRoom', { roomId: 'a', userId: 'b' })
    const queued = (await db.execute(
      sql`select count(*)::int as n from jobs.job where name = ${EMIT_JOB}`,
    )) as unknown as { rows: unknown[] }
    expect(queued.rows).toEqual([{ n: 0 }])
  })
})
