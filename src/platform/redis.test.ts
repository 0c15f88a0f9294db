import { setTimeout } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../../test/helpers/app.js'
import { tolerateUnawaitedCommands } from './redis.js'

describe('tolerateUnawaitedCommands', () => {
  const unhandled: unknown[] = []
  const record = (reason: unknown) => unhandled.push(reason)
  afterEach(() => {
    process.off('unhandledRejection', record)
    unhandled.length = 0
  })

  it('keeps a command sent without awaiting, while Redis is down, from being an unhandled rejection; an awaited one still fails', async () => {
    const client = tolerateUnawaitedCommands(
      // A port nothing listens on: the client keeps reconnecting, queueing what it is sent.
      new Redis({ port: await freePort(), host: '127.0.0.1', retryStrategy: () => 50 }),
    )
    client.on('error', () => undefined)
    // Vitest would fail the run on an unhandled rejection anyway; listening names it in this test.
    process.on('unhandledRejection', record)
    // As Socket.IO's adapter leaves its channels on close.
    void client.unsubscribe('channel')
    const awaited = client.ping()
    client.disconnect()
    await expect(awaited).rejects.toThrow('Connection is closed')
    await setTimeout(50)
    expect(unhandled).toEqual([])
  })
})
