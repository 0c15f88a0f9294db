import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import { levels } from 'pino'

/** A request's path without its query string: queries carry signatures (the edge's `_sig`), codes and addresses. */
function pathOf(request: FastifyRequest): string {
  const queryAt = request.url.indexOf('?')
  return queryAt === -1 ? request.url : request.url.slice(0, queryAt)
}

/**
 * Fastify's request lines, made one per request: nothing when the request comes in, and once the response
 * has gone, one line with the method, route pattern, status, time, request id and the account that called
 * (`info`; `error` with the error when the response failed). A request that matched no route is named by its
 * path. At `warn` nothing is built at all, so the light GET pays nothing.
 */
export class OneLinePerRequest extends LogController {
  readonly #infoEnabled: boolean

  /** `level`: the service's log level (LOG_LEVEL); `silent` and unknown levels write no line. */
  constructor(level: string) {
    super()
    this.#infoEnabled = (levels.values[level] ?? Number.POSITIVE_INFINITY) <= (levels.values.info as number)
  }

  override incomingRequest(): void {}

  /** Fastify's "Route GET:/x not found" line: the request's one line says it with its 404. */
  override routeNotFound(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (!this.#infoEnabled && !error) return
    const route = request.routeOptions.url
    const status = reply.statusCode
    const ms = Math.round(reply.elapsedTime * 10) / 10
    const fields = {
      method: request.method,
      ...(route === undefined ? { path: pathOf(request) } : { route }),
      status,
      ms,
      account_id: request.auth?.account_id,
    }
    const line = `${request.method} ${route ?? pathOf(request)} ${status} ${ms} ms`
    if (error) request.log.error({ ...fields, err: error }, line)
    else request.log.info(fields, line)
  }
}
