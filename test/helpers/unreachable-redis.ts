import { Redis } from 'ioredis'
import { freePort } from './app.js'

/**
 * A client of the service's settings (two reconnections, a short command timeout) to a port where no Redis
 * listens, once it has found so and is reconnecting: Redis down, as the service sees it.
 */
export async function unreachableRedis(): Promise<Redis> {
  const client = new Redis(`redis://127.0.0.1:${await freePort()}`, {
    maxRetriesPerRequest: 2,
    commandTimeout: 300,
  })
  client.on('error', () => undefined)
  while (client.status !== 'reconnecting') await new Promise((resolve) => setTimeout(resolve, 10))
  return client
}
