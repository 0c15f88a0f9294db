import { connect, createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'

const redisUrl = process.env.REDIS_URL

/** A TCP relay to Redis that the test can cut, as a network partition would. */
async function startRelay(target: URL): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('error', () => undefined)
      socket.on('close', () => sockets.delete(socket))
    }
    client.pipe(upstream).pipe(client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  const cut = () => {
    server.close()
    for (const socket of sockets) socket.destroy()
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    cut,
    close: async () => cut(),
  }
}

describe('GET /status/ready', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await buildTestApp()
  })
  afterAll(() => t.close())

  it('answers ok naming the database and the job queue', async () => {
    const response = await t.app.inject({ url: '/status/ready' })
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ status: 'ok', database: 'ok', jobs: 'ok' })
  })

  it('answers 503 naming the database when it stops answering', async () => {
    const down = await buildTestApp()
    try {
      await down.database.handle.close()
      const response = await down.app.inject({ url: '/status/ready' })
      expect(response.statusCode).toBe(503)
      expect(response.headers['retry-after']).toBe('5')
      expect(response.json()).toMatchObject({ success: false, errno: 503 })
      expect(response.json().message).toMatch(/^Not ready: database(, jobs)? unavailable$/)
      expect((await down.app.inject({ url: '/status' })).statusCode).toBe(200)
    } finally {
      await down.close().catch(() => undefined)
    }
  })
})

describe.skipIf(!redisUrl)('GET /status/ready with Redis', () => {
  let t: TestApp
  let relay: Awaited<ReturnType<typeof startRelay>>
  beforeAll(async () => {
    relay = await startRelay(new URL(redisUrl as string))
    t = await buildTestApp({ REDIS_URL: relay.url })
  })
  afterAll(async () => {
    await relay.close()
    await t.close().catch(() => undefined)
  })

  it('names Redis while it answers, and answers 503 naming it when it stops', async () => {
    expect((await t.app.inject({ url: '/status/ready' })).json()).toEqual({
      status: 'ok',
      database: 'ok',
      jobs: 'ok',
      redis: 'ok',
    })
    relay.cut()
    const response = await t.app.inject({ url: '/status/ready' })
    expect(response.statusCode).toBe(503)
    expect(response.json()).toEqual({
      success: false,
      errno: 503,
      message: 'Not ready: redis unavailable',
      additional_info: { unavailable: ['redis'] },
    })
  })
})
