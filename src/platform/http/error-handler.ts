import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ErrorEnvelope, errorBody } from './envelope.js'
import { DomainError } from './errors.js'
import { validationMessage } from './validation-message.js'

/** The one place where errors become HTTP responses in the error envelope. */
export function registerErrorHandling(app: FastifyInstance): void {
  app.addSchema(ErrorEnvelope)
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    if (error instanceof DomainError) {
      return reply
        .status(error.statusCode)
        .send(errorBody(error.statusCode, error.message, error.additionalInfo))
    }
    if (error.validation) {
      const { message, details } = validationMessage(error.validation, error.validationContext)
      return reply.status(400).send(errorBody(400, message, details))
    }
    const status = error.statusCode ?? (isMalformedMultipart(request, error) ? 400 : 500)
    if (status >= 400 && status < 500) {
      return reply.status(status).send(errorBody(status, error.message))
    }
    request.log.error({ err: error }, 'unhandled error')
    return reply.status(500).send(errorBody(500, 'Internal Server Error'))
  })

  app.setNotFoundHandler((request, reply) => {
    reply.status(404).send(errorBody(404, `Route ${request.method} ${request.url.split('?')[0]} not found`))
  })
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

/**
 * The multipart reader (busboy) throws plain errors, without a status, for a body that is not the
 * multipart form its content type announces (no boundary, cut short): the client's fault, not ours.
 */
function isMalformedMultipart(request: FastifyRequest, error: Error): boolean {
  const contentType = request.headers['content-type']
  return (
    typeof contentType === 'string' &&
    contentType.toLowerCase().startsWith('multipart/') &&
    /^Multipart: |multipart data$|^Unsupported Content-Type|^Malformed part header/.test(error.message)
  )
}
