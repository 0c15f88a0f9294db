import { createServer } from 'node:net'
import type { Config } from './config.js'
import {
  type DatabaseHandle,
  migrateDatabase,
  pendingMigrationsOf,
  probePostgres,
} from './platform/db/connection.js'
import type { MigrationLog } from './platform/db/migrations.js'
import { probeRedis } from './platform/redis.js'
import { StartError } from './platform/start-error.js'

/** How long a start waits on each outside thing it needs: the address to listen on, PostgreSQL, Redis. */
const CHECK_TIMEOUT_MS = 2000

/** What a process needs from outside: its addresses (PORT, METRICS_PORT), PostgreSQL, Redis. */
export type Need = 'addresses' | 'database' | 'redis'

/**
 * Checks at once, before anything is built (the embedded database's set-up alone takes seconds), that the
 * addresses are free to listen on and that PostgreSQL and Redis, when configured, answer. Every failure is
 * named, with its setting and where it points (never a password), in one StartError: "neither answers"
 * says both.
 */
export async function checkStart(config: Config, needs: Need[]): Promise<void> {
  const ports = needs.includes('addresses') ? [config.port, config.metrics.port] : []
  const { databaseUrl, redisUrl } = config
  const checks = [
    ...ports.map((port) => (port === undefined ? undefined : checkListen(config, port))),
    needs.includes('database') && databaseUrl
      ? checkReachable('DATABASE_URL', 'PostgreSQL', databaseUrl, probePostgres)
      : undefined,
    needs.includes('redis') && redisUrl
      ? checkReachable('REDIS_URL', 'Redis', redisUrl, probeRedis)
      : undefined,
  ]
  const failures = (await Promise.allSettled(checks))
    .filter((result) => result.status === 'rejected')
    .map((result) => result.reason as unknown)
  const bug = failures.find((failure) => !(failure instanceof StartError))
  if (bug) throw bug
  if (failures.length > 0)
    throw new StartError(failures.map((failure) => (failure as Error).message).join('; '))
}

/** Binds the address and lets it go: a taken port or a wrong HOST is known in milliseconds. */
async function checkListen(config: Config, port: number): Promise<void> {
  const { host } = config
  const server = createServer()
  let timer: NodeJS.Timeout | undefined
  try {
    await new Promise<void>((resolve, reject) => {
      timer = setTimeout(
        () => reject(new StartError(`HOST "${host}" did not resolve within ${CHECK_TIMEOUT_MS / 1000} s`)),
        CHECK_TIMEOUT_MS,
      )
      server.once('error', reject)
      server.listen(port, host, resolve)
    })
  } catch (error) {
    throw listenFailure(error, config)
  } finally {
    clearTimeout(timer)
    server.close()
  }
}

/**
 * A listen error as the setting at fault (PORT, METRICS_PORT or HOST) and what to do about it; an
 * unknown one as it is.
 */
export function listenFailure(error: unknown, config: Config): unknown {
  const { code, port } = error as NodeJS.ErrnoException & { port?: number }
  const setting = port !== undefined && port === config.metrics.port ? 'METRICS_PORT' : 'PORT'
  const { host } = config
  switch (code) {
    case 'EADDRINUSE':
      return new StartError(
        `${setting} ${port} on HOST ${host} is in use by another process: stop it, or set ${setting} to a free port`,
      )
    case 'EACCES':
      return new StartError(
        `${setting} ${port} needs privileges this process lacks: set ${setting} to 1024 or above`,
      )
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EADDRNOTAVAIL':
      return new StartError(
        `HOST "${host}" is not an address of this machine: set HOST to one (0.0.0.0 or :: for all of them, 127.0.0.1 for this machine only)`,
      )
    default:
      return error
  }
}

async function checkReachable(
  setting: string,
  server: string,
  url: string,
  probe: (url: string, timeoutMs: number) => Promise<void>,
): Promise<void> {
  try {
    await probe(url, CHECK_TIMEOUT_MS)
  } catch (error) {
    throw new StartError(`${setting}: cannot use ${server} at ${whereTo(url)} (${reason(error)})`)
  }
}

/** host:port/database of a URL, without its user and password. */
function whereTo(url: string): string {
  const { host, pathname } = new URL(url)
  return `${host || 'localhost'}${pathname === '/' ? '' : pathname}`
}

function reason(error: unknown): string {
  const { code, message } = error as NodeJS.ErrnoException
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection refused: is it running, and on that port?'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'host not found'
    case 'ETIMEDOUT':
      return `no answer within ${CHECK_TIMEOUT_MS / 1000} s`
    default:
      // pg's own message on a timeout; otherwise the server's answer (a missing database, a refused password).
      return /timeout/i.test(message) ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s` : message
  }
}

/**
 * Brings the database's schema to the code's, or refuses to start on an older one. A production server on
 * PostgreSQL never migrates: deploying applies the migrations first (`npm run db:migrate`,
 * docs/deploying.md), while the release before serves. A development server, and any on the embedded database (one
 * process, which nothing else serves from), migrate as they start. A database newer than the code (the next
 * release's migrations applied while this one serves) has nothing pending and starts.
 */
export async function prepareSchema(
  config: Config,
  database: DatabaseHandle,
  log: MigrationLog,
): Promise<void> {
  const options = { databaseUrl: config.databaseUrl }
  if (config.nodeEnv !== 'production' || !config.databaseUrl) {
    await migrateDatabase(database, options, { ...config.migrations, log })
    return
  }
  const pending = await pendingMigrationsOf(database, options)
  if (pending.length > 0) {
    const named = pending.length > 2 ? `${pending[0]} to ${pending.at(-1)}` : pending.join(' and ')
    throw new StartError(
      `the database lacks ${pending.length} migration(s) of this release (${named}): apply them with \`npm run db:migrate\` before starting it`,
    )
  }
}
