import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import {
  ErrorEnvelope,
  type ErrorEnvelopeName,
  errorBody,
  errorBodyIn,
  StatusErrorEnvelope,
} from './envelope.js'
import { DomainError, ServiceUnavailable, TooManyRequests } from './errors.js'
import { type Unavailability, unavailabilityOf } from './unavailable.js'
import { validationMessage } from './validation-message.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The envelope of the route's errors, when its spec gives another than `success` (see `routeOptions`). */
    errorEnvelope?: ErrorEnvelopeName
  }
}

/** The one place where errors become HTTP responses, in the error envelope of the route that failed. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.addSchema(ErrorEnvelope)
  app.addSchema(StatusErrorEnvelope)
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    const envelope = request.routeOptions.config.errorEnvelope ?? 'success'
    const send = (status: number, message: string, additionalInfo?: unknown) =>
      reply.status(status).send(errorBodyIn(envelope, status, message, additionalInfo))
    if (error instanceof DomainError) {
      addChallenge(request, reply, error)
      return send(error.statusCode, error.message, error.additionalInfo)
    }
    if (error.validation) {
      const { message, details } = validationMessage(error.validation, error.validationContext)
      return send(400, message, details)
    }
    const unavailable = unavailabilityOf(error)
    if (unavailable) return sendUnavailable(request, reply, unavailable, error)
    const malformed = malformedMultipart(request, error)
    if (malformed && !error.statusCode) return send(400, malformed)
    const status = error.statusCode ?? 500
    if (status >= 400 && status < 500) return send(status, error.message)
    request.log.error({ err: error }, 'unhandled error')
    return send(500, 'Internal Server Error')
  })

  app.setNotFoundHandler(routeNotFound('success'))
}

/**
 * A dependency that did not answer in time (a held lock, a busy pool, PostgreSQL or Redis down): 503 with
 * Retry-After, which a client may act on, instead of a 500; logged once, with what the request waited for.
 */
function sendUnavailable(
  request: FastifyRequest,
  reply: FastifyReply,
  { dependency, waitedFor, retryAfterSeconds }: Unavailability,
  error: Error,
) {
  request.log.warn(
    { err: error, dependency, waitedFor },
    `${dependency} unavailable (${waitedFor}): answered 503`,
  )
  const envelope = request.routeOptions.config.errorEnvelope ?? 'success'
  return reply
    .status(503)
    .header('retry-after', String(retryAfterSeconds))
    .send(
      errorBodyIn(envelope, 503, `Service unavailable: the ${dependency} did not answer in time`, {
        retry_after: retryAfterSeconds,
      }),
    )
}

/**
 * What the client is told to do next, where a route did not say it itself: RFC 6750 3 (a 401 names the
 * Bearer scheme, with `invalid_token` when a token was sent), RFC 6585 4 and RFC 9110 15.6.4 (a 429, and a 503
 * of a dependency that is down for now, say when to retry).
 */
function addChallenge(request: FastifyRequest, reply: FastifyReply, error: DomainError) {
  if (error.statusCode === 401 && !reply.hasHeader('www-authenticate')) {
    reply.header(
      'www-authenticate',
      request.headers.authorization ? 'Bearer error="invalid_token"' : 'Bearer',
    )
  } else if (
    (error instanceof TooManyRequests || error instanceof ServiceUnavailable) &&
    !reply.hasHeader('retry-after')
  ) {
    reply.header('retry-after', String(error.retryAfterSeconds))
  }
}

/**
 * The 404 of a path no route answers, in the error envelope of the area the path falls in: the service's
 * (`success`), or, set with `setNotFoundHandler` in a plugin under the area's prefix, the area's own.
 */
export function routeNotFound(envelope: ErrorEnvelopeName) {
  return (request: FastifyRequest, reply: FastifyReply) => {
    reply
      .status(404)
      .send(errorBodyIn(envelope, 404, `Route ${request.method} ${request.url.split('?')[0]} not found`))
  }
}

/**
 * Fastify's `frameworkErrors`: refusals made before a route is found (a path parameter longer than
 * `maxParamLength`: 414; a URL that does not decode: 400), in the error envelope like every other error.
 */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode ?? 400
  reply
    .status(status)
    .send(errorBody(status, error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'URI Too Long' : 'Bad Request'))
}

/** What Node's HTTP parser refuses before Fastify sees a request: its status and the envelope's message. */
function clientErrorAnswer(error: Error & { code?: string; reason?: string }): [number, string] {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'Request Timeout']
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'Request Header Fields Too Large']
    case 'HPE_INVALID_URL':
      return [400, 'The URL holds a character it must percent-encode (UTF-8, e.g. … as %E2%80%A6)']
    default:
      return [400, `Malformed HTTP request${error.reason ? `: ${error.reason}` : ''}`]
  }
}

/**
 * Fastify's `clientErrorHandler`: a request Node's HTTP parser refuses (a raw non-ASCII character in the
 * URL, headers too large, a request too slow) is answered in the error envelope, not Fastify's own body,
 * and the connection closed, as Node and Fastify do.
 */
export function clientErrors(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  if (socket.writable) {
    const [status, message] = clientErrorAnswer(error)
    const body = JSON.stringify(errorBody(status, message))
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/**
 * The multipart reader (busboy) throws plain errors, without a status, for a body that is not the
 * multipart form its content type announces (no boundary, cut short): the client's fault, not ours. A
 * file part cut short ends its stream early instead (Node's "Premature close"), which says less: it is
 * told in the reader's words. Returns the 400's message, or undefined for another error.
 */
function malformedMultipart(request: FastifyRequest, error: Error): string | undefined {
  const contentType = request.headers['content-type']
  if (typeof contentType !== 'string' || !contentType.toLowerCase().startsWith('multipart/')) return undefined
  if ((error as { code?: string }).code === 'ERR_STREAM_PREMATURE_CLOSE')
    return 'Unexpected end of multipart data'
  return /^Multipart: |multipart data$|^Unsupported Content-Type|^Malformed part header/.test(error.message)
    ? error.message
    : undefined
}
