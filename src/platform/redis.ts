import { Redis } from 'ioredis'
import type { Logger } from './log/logger.js'
import { createOutageLog } from './log/outage-log.js'
import { traceRedisCommands } from './tracing/redis-spans.js'

/**
 * Logs a connection's outage once when it starts and once when it ends; ioredis keeps reconnecting and
 * emits an error at every attempt, which without a listener it prints to stderr itself.
 */
function logOutages(client: Redis, log: Logger, name: string): Redis {
  const outage = createOutageLog(log, `${name}: Redis`)
  client.on('error', outage.failed)
  client.on('ready', outage.recovered)
  return client
}

/**
 * How long to wait before each attempt to reconnect: ioredis's default grows to 2 s, and a subscriber
 * (the Socket.IO adapter's, the caches') misses every message published before it is back; at most half a
 * second after Redis returns, events cross instances again. Duplicated connections keep it.
 */
const reconnectDelayMs = (attempt: number) => Math.min(attempt * 50, 500)

/**
 * The service's Redis connection (REDIS_URL): a command waits through two reconnections and at most
 * `commandTimeoutMs` (REDIS_COMMAND_TIMEOUT_MS) in all, then fails; what needs it answers 503 meanwhile.
 */
export function createRedis(url: string, log: Logger, commandTimeoutMs: number): Redis {
  const client = new Redis(url, {
    maxRetriesPerRequest: 2,
    commandTimeout: commandTimeoutMs,
    connectTimeout: commandTimeoutMs,
    retryStrategy: reconnectDelayMs,
  })
  return traceRedisCommands(logOutages(client, log, 'commands'))
}

/**
 * Connects once and sends PING, without retrying, giving up after `timeoutMs`: a start checks that Redis
 * answers instead of queueing its first commands through reconnections. Rejects with the connection's
 * own error (ECONNREFUSED, WRONGPASS...), not ioredis's "Connection is closed".
 */
export async function probeRedis(url: string, timeoutMs: number): Promise<void> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    enableOfflineQueue: false,
  })
  let cause: Error | undefined
  client.on('error', (error: Error) => {
    cause ??= error
  })
  try {
    await client.connect()
    await client.ping()
  } catch (error) {
    throw cause ?? error
  } finally {
    client.disconnect()
  }
}

/** Another connection with the same settings, for a subscriber (which can send nothing else). */
export function duplicateRedis(client: Redis, log: Logger, name: string): Redis {
  return logOutages(client.duplicate(), log, name)
}

/**
 * For a client handed to a library that sends commands without awaiting them (Socket.IO's Redis adapter
 * leaves its channels on close that way): a command failing while Redis is down is the outage logged
 * already, not an unhandled rejection, which would end the process. Callers that await still see it fail.
 */
export function tolerateUnawaitedCommands(client: Redis): Redis {
  const send = client.sendCommand.bind(client)
  client.sendCommand = ((command: { promise: Promise<unknown> }, ...rest: unknown[]) => {
    command.promise.catch(() => undefined)
    return (send as (...args: unknown[]) => unknown)(command, ...rest)
  }) as Redis['sendCommand']
  return client
}

/** Closes politely (QUIT) when Redis answers, at once when it does not: shutdown must not fail on it. */
export async function closeRedis(client: Redis): Promise<void> {
  // A QUIT queued while reconnecting fails after the retries, and ioredis reports that rejection as
  // unhandled whatever the caller catches: only a ready connection is asked to quit.
  if (client.status === 'ready') await client.quit().catch(() => client.disconnect())
  else client.disconnect()
}

/**
 * Whether a command failed because Redis did not answer: down past the command's reconnections
 * (MaxRetriesPerRequestError), slower than REDIS_COMMAND_TIMEOUT_MS, or its connection closed.
 */
export function isRedisUnavailable(error: unknown): boolean {
  return (
    error instanceof Error &&
    (error.name === 'MaxRetriesPerRequestError' ||
      /^(Command timed out|Connection is closed\.|Stream isn't writeable)/.test(error.message))
  )
}
