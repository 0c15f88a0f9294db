import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { openApiOptions } from './openapi.js'
import { sendsDocument } from './response-headers.js'

export const REFERENCE_PATH = '/docs'

/** What `GET /` tells a program: where the reference, its document and the service's status are. */
const Index = Type.Object({
  name: Type.String(),
  reference: Type.String(),
  openapi: Type.String(),
  status: Type.String(),
})

const INDEX = {
  name: 'Platform backend',
  reference: REFERENCE_PATH,
  openapi: `${REFERENCE_PATH}/json`,
  status: '/status',
}

/**
 * The API reference: the OpenAPI document at `/docs/json`, read in Swagger UI at `/docs` (already a
 * dependency; Scalar's reader weighs 24 MB installed, 40 MB of memory, and wants Node 22), and `GET /`,
 * which points to it: a browser is sent to the reference, a program gets the links as JSON. Registered
 * after the hooks every route has, before the routes it documents.
 */
export async function registerApiReference(
  app: FastifyInstance,
  scopes: Record<string, string>,
): Promise<void> {
  await app.register(swagger, openApiOptions(scopes))
  await app.register(swaggerUi, {
    routePrefix: REFERENCE_PATH,
    uiConfig: {
      // 220 operations: the tags listed closed, a filter by tag, and a link to each operation.
      docExpansion: 'none',
      filter: true,
      deepLinking: true,
      displayOperationId: true,
      defaultModelsExpandDepth: 0,
    },
    uiHooks: {
      onRequest: (_request, reply, done) => {
        sendsDocument(reply)
        done()
      },
    },
  })
  app.get('/', { schema: { hide: true, response: { 200: Index } } }, async (request, reply) => {
    if (request.headers.accept?.includes('text/html')) return reply.redirect(REFERENCE_PATH, 302)
    return INDEX
  })
}
