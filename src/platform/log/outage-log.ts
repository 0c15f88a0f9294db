import type { Logger } from './logger.js'

/**
 * Logs a dependency's outage once when it starts and once when it ends: while PostgreSQL or Redis is down,
 * every connection attempt and every poll fails, and a line each would bury everything else.
 */
export function createOutageLog(log: Logger, dependency: string) {
  let down = false
  return {
    failed(error: unknown): void {
      if (down) return
      down = true
      log.warn({ err: error }, `${dependency}: connection lost; reconnecting`)
    },
    recovered(): void {
      if (!down) return
      down = false
      log.info(`${dependency}: connection back`)
    },
  }
}
