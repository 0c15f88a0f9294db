import type { FastifyBaseLogger } from 'fastify'
import type { Bindings, ChildLoggerOptions, Level, Logger as PinoLogger } from 'pino'

type LogMethod = (...args: unknown[]) => void

/**
 * A request's logger: its lines carry the request id (`reqId`) as a pino child's would, but the child is made
 * only when the request writes a line at an enabled level. At `warn` most requests write none, and making a
 * child for each cost about 6 % of the light GET's instructions (decisions.md, "The request's logger").
 */
class RequestLogger implements FastifyBaseLogger {
  #child: PinoLogger | undefined

  constructor(
    private readonly parent: PinoLogger,
    private readonly bindings: Bindings,
  ) {}

  #logger(): PinoLogger {
    this.#child ??= this.parent.child(this.bindings)
    return this.#child
  }

  #write(level: Level, args: unknown[]): void {
    if (!(this.#child ?? this.parent).isLevelEnabled(level)) return
    const logger = this.#logger()
    ;(logger[level] as LogMethod).apply(logger, args)
  }

  get level(): string {
    return (this.#child ?? this.parent).level
  }
  set level(level: string) {
    this.#logger().level = level
  }
  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }
  fatal(...args: unknown[]) {
    this.#write('fatal', args)
  }
  error(...args: unknown[]) {
    this.#write('error', args)
  }
  warn(...args: unknown[]) {
    this.#write('warn', args)
  }
  info(...args: unknown[]) {
    this.#write('info', args)
  }
  debug(...args: unknown[]) {
    this.#write('debug', args)
  }
  trace(...args: unknown[]) {
    this.#write('trace', args)
  }
  silent() {}
}

/**
 * Fastify's `childLoggerFactory`. A route with a log level or serializers of its own (none has one today)
 * gets pino's child at once.
 */
export function requestLogger(
  parent: FastifyBaseLogger,
  bindings: Bindings,
  options: ChildLoggerOptions,
): FastifyBaseLogger {
  const pino = parent as PinoLogger
  if (options.level !== undefined || options.serializers !== undefined) return pino.child(bindings, options)
  return new RequestLogger(pino, bindings)
}
