import { randomBytes } from 'node:crypto'
import Fastify, { type FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { unreachableRedis } from '../../../test/helpers/unreachable-redis.js'
import { registerErrorHandling } from './error-handler.js'
import { registerRateLimit } from './rate-limit.js'

async function limitedApp(redis: Redis | undefined, key: string): Promise<FastifyInstance> {
  const app = Fastify()
  registerErrorHandling(app)
  await registerRateLimit(app, redis)
  app.get(
    '/limited',
    { config: { rateLimit: { max: 3, timeWindow: '1 minute', keyGenerator: () => key } } },
    async () => ({
      ok: true,
    }),
  )
  app.get(
    '/limited-status',
    {
      config: {
        errorEnvelope: 'status',
        rateLimit: { max: 1, timeWindow: '1 minute', keyGenerator: () => `${key}-status` },
      },
    },
    async () => ({ ok: true }),
  )
  app.get('/open', async () => ({ ok: true }))
  await app.ready()
  return app
}

const statuses = async (apps: FastifyInstance[], url: string, count: number) => {
  const codes: number[] = []
  for (let i = 0; i < count; i++)
    codes.push((await (apps[i % apps.length] as FastifyInstance).inject({ url })).statusCode)
  return codes
}

describe('rate limits in memory', () => {
  it('limits only the routes that ask, answering 429 in the error envelope', async () => {
    const app = await limitedApp(undefined, 'k')
    expect(await statuses([app], '/limited', 4)).toEqual([200, 200, 200, 429])
    const refused = await app.inject({ url: '/limited' })
    expect(refused.json()).toMatchObject({ success: false, errno: 429, message: 'Too many requests' })
    expect(refused.headers['retry-after']).toBeDefined()
    expect(await statuses([app], '/open', 5)).toEqual([200, 200, 200, 200, 200])
    await app.close()
  })

  it('answers 429 in the error envelope the route names', async () => {
    const app = await limitedApp(undefined, 'k')
    expect(await statuses([app], '/limited-status', 2)).toEqual([200, 429])
    expect((await app.inject({ url: '/limited-status' })).json()).toStrictEqual({
      status: false,
      errno: 429,
      message: 'Too many requests',
      additional_info: { retry_after: expect.any(Number) },
    })
    await app.close()
  })
})

describe.runIf(process.env.REDIS_URL)('rate limits in Redis', () => {
  const clients: Redis[] = []
  afterAll(async () => {
    for (const client of clients) await client.quit()
  })

  it('holds one limit across instances', async () => {
    const key = `test-${randomBytes(6).toString('hex')}`
    const apps = []
    for (let i = 0; i < 2; i++) {
      const client = new Redis(process.env.REDIS_URL as string)
      clients.push(client)
      apps.push(await limitedApp(client, key))
    }
    expect(await statuses(apps, '/limited', 4)).toEqual([200, 200, 200, 429])
    for (const app of apps) await app.close()
  })
})

describe('rate limits while Redis does not answer', () => {
  it('count in each instance’s memory: the limit holds, no request fails', async () => {
    const down = await unreachableRedis()
    try {
      const app = await limitedApp(down, `down-${randomBytes(6).toString('hex')}`)
      expect(await statuses([app], '/limited', 4)).toEqual([200, 200, 200, 429])
      await app.close()
    } finally {
      down.disconnect()
    }
  })
})
