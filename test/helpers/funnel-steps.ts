import { eq } from 'drizzle-orm'
import type { FastifyInstance } from 'fastify'
import { stepCacheOf } from '../../src/modules/funnels/step-cache.js'
import { funnels } from '../../src/modules/funnels/tables.js'

/**
 * Puts an entry for the funnel into the app's step cache; the function returned tells whether a write
 * has forgotten it since.
 */
export function cacheProbe(app: FastifyInstance, funnelId: string): () => boolean {
  const cache = stepCacheOf(app.platform)
  const key = `probe:${funnelId}:${Math.random()}`
  cache.set(key, funnelId, 'cached', cache.generation())
  return () => cache.get(key) === undefined
}

/** Soft-deletes a funnel straight in its table (the funnel delete route is another feature's). */
export async function softDeleteFunnel(app: FastifyInstance, funnelId: string): Promise<void> {
  await app.platform.db
    .update(funnels)
    .set({ deleted: true, deletedAt: new Date() })
    .where(eq(funnels.id, funnelId))
}

/** A builder components document with `count` components, the first one's text set to `text`. */
export function builderDocument(text: string, count = 1, version = '2.1') {
  return {
    version,
    components: Array.from({ length: count }, (_, i) => ({
      id: `block-${i}`,
      type: 'text',
      settings: { align: 'left', margin: { top: i } },
      content: { text: i === 0 ? text : `block ${i}` },
    })),
  }
}
