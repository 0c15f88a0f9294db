import type { FastifyError, FastifyInstance } from 'fastify'
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
    const status = error.statusCode ?? 500
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
