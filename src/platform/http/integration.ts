import type { FastifyInstance, FastifyPluginAsync } from 'fastify'

/** Third-party integration routes answer under both `/v1/integrations` and `/v1/e`. */
export async function registerIntegrationRoutes<O extends object>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<O>,
  options: O,
): Promise<void> {
  await app.register(plugin, { ...options, prefix: '/v1/integrations' })
  await app.register(plugin, { ...options, prefix: '/v1/e' })
}
