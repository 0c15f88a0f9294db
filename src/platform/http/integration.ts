import type { FastifyInstance, FastifyPluginAsync } from 'fastify'

/**
 * Routes that answer under two prefixes. The copy under `alias` names each operation
 * `<operationId><aliasSuffix>`, so every operation of `/docs/json` keeps a unique id.
 */
export async function registerUnderTwoPrefixes<O extends object>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<O>,
  options: O,
  prefixes: { prefix: string; alias: string; aliasSuffix: string },
): Promise<void> {
  await app.register(plugin, { ...options, prefix: prefixes.prefix })
  await app.register(async (copy) => {
    copy.addHook('onRoute', (route) => {
      const operationId = route.schema?.operationId
      if (operationId)
        route.schema = { ...route.schema, operationId: `${operationId}${prefixes.aliasSuffix}` }
    })
    await copy.register(plugin, { ...options, prefix: prefixes.alias })
  })
}

/** Third-party integration routes answer under both `/v1/integrations` and `/v1/e` (`<operationId>ViaE`). */
export const registerIntegrationRoutes = <O extends object>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<O>,
  options: O,
) =>
  registerUnderTwoPrefixes(app, plugin, options, {
    prefix: '/v1/integrations',
    alias: '/v1/e',
    aliasSuffix: 'ViaE',
  })

/** Reviews answer under `/reviews` and `/v1/reviews` (`<operationId>V1`). */
export const registerReviewsRoutes = <O extends object>(
  app: FastifyInstance,
  plugin: FastifyPluginAsync<O>,
  options: O,
) =>
  registerUnderTwoPrefixes(app, plugin, options, {
    prefix: '/reviews',
    alias: '/v1/reviews',
    aliasSuffix: 'V1',
  })
