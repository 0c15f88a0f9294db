import type { FastifyInstance } from 'fastify'
import { type Config, ConfigError, loadConfig } from './config.js'

/** The configuration, or exit 1 with the message naming the bad variable. */
export function loadConfigOrExit(): Config {
  try {
    return loadConfig()
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`Configuration error: ${error.message}`)
    process.exit(1)
  }
}

/**
 * On SIGTERM or SIGINT: stop accepting connections, let in-flight requests and running jobs finish,
 * close the database, then exit.
 */
export function closeOnSignals(app: FastifyInstance): void {
  let closing = false
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (closing) return
      closing = true
      app.log.info(`${signal}: finishing in-flight requests and jobs`)
      app.close().then(
        () => process.exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, 'shutdown failed')
          process.exit(1)
        },
      )
    })
  }
}
