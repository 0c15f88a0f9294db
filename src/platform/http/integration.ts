import type { FastifyInstance, FastifyPluginAsync } from 'fastify'

/**
 * Third-party integration routes answer under both `/v1/integrations` and `/v1/e`. The `/v1/e` copy of
 * each operation is named `<operationId>ViaE`, so every operation of `/docs/json` keeps a unique id.
 */
export async function registerIntegrationRoutes<O extends object>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<O>,
  options: O,
): Promise<void> {
  await app.register(plugin, { ...options, prefix: '/v1/integrations' })
  await app.register(async (short) => {
    short.addHook('onRoute', (route) => {
      const operationId = route.schema?.operationId
      if (operationId) route.schema = { ...route.schema, operationId: `${operationId}ViaE` }
    })
    await short.register(plugin, { ...options, prefix: '/v1/e' })
  })
}
