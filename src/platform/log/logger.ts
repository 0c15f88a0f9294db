import type { LogFn } from 'pino'

/**
 * What services log through: the levels of the service's pino logger, without Fastify's types, so a
 * service can be called from a route, a job or a test alike.
 */
export interface Logger {
  error: LogFn
  warn: LogFn
  info: LogFn
  debug: LogFn
}
