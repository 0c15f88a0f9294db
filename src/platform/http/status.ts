import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import { errorBody } from './envelope.js'

/** Liveness (`/status`, as the spec) and readiness (`/status/ready`: the database answers). */
export const statusRoutes: FastifyPluginAsyncTypebox<{ ping: () => Promise<void> }> = async (
  app,
  { ping },
) => {
  app.get(
    '/status',
    {
      schema: {
        tags: ['status'],
        summary: 'Liveness',
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  )

  app.get(
    '/status/ready',
    { schema: { tags: ['status'], summary: 'Readiness: the database answers' } },
    async (request, reply) => {
      try {
        await ping()
        return { status: 'ok', database: 'ok' }
      } catch (error) {
        request.log.error({ err: error }, 'readiness check failed')
        return reply.status(503).send(errorBody(503, 'Database unavailable'))
      }
    },
  )
}
