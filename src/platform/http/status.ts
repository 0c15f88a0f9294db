import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorBody, errorResponses } from './envelope.js'

/** Liveness (`/status`, as the spec) and readiness (`/status/ready`: the database answers). */
export const statusRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void> }> = async (
  app,
  { ping },
) => {
  app.get(
    '/status',
    {
      schema: {
        operationId: 'statusLive',
        tags: ['status'],
        summary: 'Liveness',
        // 400: the platform refuses a NUL character in any path, query or body, on every route.
        response: { 200: Type.Object({ status: Type.Literal('ok') }), ...errorResponses(400) },
      },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/status/ready',
    {
      schema: {
        operationId: 'statusReady',
        tags: ['status'],
        summary: 'Readiness: the database answers',
        response: {
          200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }),
          ...errorResponses(400, 503),
        },
      },
    },
    async (request, reply) => {
      try {
        await ping()
        return { status: 'ok' as const, database: 'ok' as const }
      } catch (error) {
        request.log.error({ err: error }, 'readiness check failed')
        return reply.status(503).send(errorBody(503, 'Database unavailable'))
      }
    },
  )
}
