import { existsSync, readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { type Config, ConfigError, loadConfig } from './config.js'
import { StartError } from './platform/start-error.js'

/**
 * Reads `.env` in the working directory into the environment, when there is one. A variable the real
 * environment sets (even to the empty string) wins: Node's own loader never overrides one.
 */
export function loadEnvFile(): void {
  if (!existsSync('.env')) return
  refuseUnquotedPem(readFileSync('.env', 'utf8'))
  process.loadEnvFile('.env')
}

/**
 * Node's `.env` reader keeps only the first line of an unquoted value, so a PEM pasted as is becomes its
 * `-----BEGIN` line, and the lines after it are read as other (broken) variables: the error would then
 * name one of those. The value's own variable is named instead.
 */
function refuseUnquotedPem(text: string): void {
  const unquoted = /^\s*(?:export\s+)?([\w.-]+)\s*=\s*-----BEGIN [A-Z0-9 ]+-----\s*$/m.exec(text)
  if (unquoted) {
    throw new ConfigError(
      `${unquoted[1]} in .env is a PEM on several lines without quotes, of which Node's .env reader keeps the first only: put the value in double quotes, as .env.example shows`,
    )
  }
}

/** The configuration (`.env` read first), or exit 1 with the message naming the bad variable. */
export function loadConfigOrExit(): Config {
  try {
    loadEnvFile()
    return loadConfig()
  } catch (error) {
    exitOnStartError(error)
  }
}

/**
 * Runs a process's start (its checks, building the app, listening). A StartError, a mistake in how the
 * service is set up, ends the process at once with its one line and exit 1, leaving nothing half-started
 * to wait for; any other error is a bug and keeps its stack.
 */
export async function startOrExit<T>(start: () => Promise<T>): Promise<T> {
  try {
    return await start()
  } catch (error) {
    exitOnStartError(error)
  }
}

function exitOnStartError(error: unknown): never {
  if (!(error instanceof StartError)) throw error
  const kind = error instanceof ConfigError ? 'Configuration error' : 'Cannot start'
  console.error(`${kind}: ${error.message.replace(/\s+/g, ' ')}`)
  process.exit(1)
}

/**
 * Listens on HOST and PORT, and says so once: Fastify writes "Server listening" once per address of the
 * machine when HOST is 0.0.0.0, so its lines are held back (nothing else logs in that moment).
 */
export async function listen(
  app: FastifyInstance,
  { host, port }: Pick<Config, 'host' | 'port'>,
): Promise<void> {
  const level = app.log.level
  app.log.level = 'silent'
  try {
    await app.listen({ port, host })
  } finally {
    app.log.level = level
  }
  // PORT=0 listens on any free port: the one taken is said.
  const listening = (app.server.address() as AddressInfo).port
  app.log.info(`Server listening on ${host.includes(':') ? `[${host}]` : host}:${listening}`)
}

/**
 * On SIGTERM or SIGINT, a server (`servesHttp`): readiness answers 503 at once while it keeps serving for
 * SHUTDOWN_DELAY_MS (a load balancer stops sending meanwhile); then it stops accepting, finishes in-flight
 * requests and running jobs, closes sockets, Redis and the database, and exits 0. A worker finishes its
 * running jobs and closes. Whatever is still running SHUTDOWN_TIMEOUT_MS after the delay is abandoned with
 * exit 1.
 */
export function closeOnSignals(
  app: FastifyInstance,
  shutdown: Config['shutdown'] & { servesHttp: boolean },
): void {
  let closing = false
  const close = async (signal: string) => {
    if (shutdown.servesHttp) {
      app.readiness.shuttingDown = true
      app.log.info(`${signal}: readiness answers 503; serving ${shutdown.delayMs} ms more, then closing`)
      await sleep(shutdown.delayMs)
    }
    setTimeout(() => {
      app.log.error(`shutdown took over ${shutdown.timeoutMs} ms (SHUTDOWN_TIMEOUT_MS); exiting anyway`)
      process.exit(1)
    }, shutdown.timeoutMs).unref()
    app.log.info(
      shutdown.servesHttp
        ? 'closing: no new connections; finishing in-flight requests and jobs'
        : `${signal}: finishing running jobs, then closing`,
    )
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
