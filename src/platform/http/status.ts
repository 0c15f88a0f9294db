import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorBody } from './envelope.js'
import { routeOptions } from './route-options.js'

/** Liveness (`/status`, as the spec) and readiness (`/status/ready`: the database answers). */
export const statusRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void> }> = async (
  app,
  { ping },
) => {
  app.get(
    '/status',
    routeOptions({
      operationId: 'statusLive',
      summary: 'Liveness',
      tags: ['status'],
      access: 'public',
      response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      // 400: the platform refuses a NUL character in any path, query or body, on every route.
      errors: [400],
    }),
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/status/ready',
    routeOptions({
      operationId: 'statusReady',
      summary: 'Readiness: the database answers',
      tags: ['status'],
      access: 'public',
      response: { 200: Type.Object({ status: Type.Literal('ok'), database: Type.Literal('ok') }) },
      errors: [400, 503],
    }),
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
