import type { Database } from '../../platform/db/connection.js'
import type { Logger } from '../../platform/log/logger.js'
import { listStepIds } from './edge-cache.repository.js'
import { funnelTag, stepTag } from './edge-protocol.js'
import { type EdgePurgeSettings, purgeEdgeTags } from './edge-purge.js'
import { requireFunnel, requireStep } from './funnel-access.service.js'
import type { StepCache } from './step-cache.js'

export interface EdgeCacheDeps {
  db: Database
  stepCache: Pick<StepCache, 'forgetFunnel'>
  edge: EdgePurgeSettings
  log: Logger
}

/**
 * Purges a funnel's cached pages: one step's (`stepId`), every step's (`all`), or the funnel-level tag,
 * which covers every page the edge keeps of the funnel, under any path it had. The origin's own cache is
 * filed by funnel, so it forgets the funnel's entries in every case (on every instance, with Redis); the
 * edge purges by tag, which reaches a page whatever its URL and scheme.
 */
export async function purgeFunnelCache(
  deps: EdgeCacheDeps,
  accountId: string,
  funnelId: string,
  scope: { stepId?: string; all?: boolean },
): Promise<void> {
  let tags: string[]
  if (scope.stepId !== undefined) {
    const { step } = await requireStep(deps.db, accountId, scope.stepId, funnelId)
    tags = [stepTag(step.id)]
  } else {
    const funnel = await requireFunnel(deps.db, accountId, funnelId)
    tags = scope.all
      ? (await listStepIds(deps.db, accountId, funnel.id)).map(stepTag)
      : [funnelTag(funnel.id)]
  }
  deps.stepCache.forgetFunnel(funnelId)
  await purgeEdgeTags(deps.edge, tags, deps.log)
}
