import { createRequire } from 'node:module'

/** Where the service's log lines go: what Fastify's logger takes as its `stream`. */
export interface LogStream {
  write(line: string): void
}

/** What is written to: stdout, whose `isTTY` says whether a person reads it. */
export interface Stdout {
  isTTY?: boolean
  write(text: string): unknown
}

/** pino-pretty's `prettyFactory`: a function turning one JSON line into readable text. */
type Prettifier = (options: Record<string, unknown>) => (line: string) => string

/**
 * Readable lines for a person: a development process whose stdout is a terminal. JSON for anything else (a
 * pipe, a file, a collector) and always in production, where lines are read by machines.
 */
export function logFormat(nodeEnv: string, stdoutIsTerminal: boolean): 'pretty' | 'json' {
  return nodeEnv === 'development' && stdoutIsTerminal ? 'pretty' : 'json'
}

/**
 * pino-pretty, a development dependency: a production install (`npm ci --omit=dev`) lacks it, and a
 * development start there logs JSON instead of failing.
 */
function loadPrettifier(name: string): Prettifier | undefined {
  try {
    return (createRequire(import.meta.url)(name) as { prettyFactory: Prettifier }).prettyFactory
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined
    throw error
  }
}

/**
 * The log stream of a server or worker: readable lines (local time, coloured level, the message, then the
 * line's other fields) when `logFormat` says so and pino-pretty is installed; undefined otherwise, and pino
 * writes its JSON to stdout. Each line is formatted and written as it is logged, in the process (no worker
 * thread), so that nothing logged just before an exit is lost.
 */
export function consoleLogStream(
  nodeEnv: string,
  stdout: Stdout = process.stdout,
  prettifier = 'pino-pretty',
): LogStream | undefined {
  if (logFormat(nodeEnv, stdout.isTTY === true) === 'json') return undefined
  const prettyFactory = loadPrettifier(prettifier)
  if (!prettyFactory) return undefined
  const pretty = prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
  return { write: (line) => void stdout.write(pretty(line)) }
}
