import { existsSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { type Config, ConfigError, loadConfig } from './config.js'

/**
 * Reads `.env` in the working directory into the environment, when there is one. A variable the real
 * environment sets (even to the empty string) wins: Node's own loader never overrides one.
 */
export function loadEnvFile(): void {
  if (existsSync('.env')) process.loadEnvFile('.env')
}

/** The configuration (`.env` read first), or exit 1 with the message naming the bad variable. */
export function loadConfigOrExit(): Config {
  try {
    loadEnvFile()
    return loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`Configuration error: ${error.message}`)
    process.exit(1)
  }
}

/**
 * On SIGTERM or SIGINT: readiness answers 503 at once while the server keeps serving for
 * SHUTDOWN_DELAY_MS (a load balancer stops sending meanwhile); then it stops accepting, finishes in-flight
 * requests and running jobs, closes sockets, Redis and the database, and exits 0. Whatever is still
 * running SHUTDOWN_TIMEOUT_MS after the delay is abandoned with exit 1.
 */
export function closeOnSignals(app: FastifyInstance, shutdown: Config['shutdown']): void {
  let closing = false
  const close = async (signal: string) => {
    app.readiness.shuttingDown = true
    app.log.info(`${signal}: readiness answers 503; serving ${shutdown.delayMs} ms more, then closing`)
    await sleep(shutdown.delayMs)
    setTimeout(() => {
      app.log.error(`shutdown took over ${shutdown.timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting anyway`)
      process.exit(1)
    }, shutdown.timeoutMs).unref()
    app.log.info('closing: no new connections; finishing in-flight requests and jobs')
    await app.close()
  }
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return
      closing = true
      close(signal).then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, 'shutdown failed')
          process.exit(1)
        },
      )
    })
  }
}
