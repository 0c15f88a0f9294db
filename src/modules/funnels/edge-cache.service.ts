import type { Database } from '../../platform/db/connection.js'
import { UpstreamFailed } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import { listFunnelIds, listStepIds } from './edge-cache.repository.js'
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

/** A removed account's funnels, whose pages the edge and the origin's cache forget (`account.removed`). */
export interface RemovedFunnelsPurge {
  account_id: string
  funnel_ids: string[]
}

/** Funnels per purge job: each job's tags go to the edge in requests of PURGE_BATCH_SIZE. */
const FUNNELS_PER_PURGE = 500

/**
 * Queues, in the removal's transaction (`account.removed`), the purge of each removed account's funnels'
 * pages, listed now, before the removal deletes the funnels.
 */
export async function queueRemovedFunnelsPurges(
  tx: Database,
  accountIds: string[],
  enqueue: (tx: Database, purge: RemovedFunnelsPurge, part: number) => Promise<unknown>,
): Promise<void> {
  for (const accountId of accountIds) {
    const ids = await listFunnelIds(tx, accountId)
    for (let at = 0; at < ids.length; at += FUNNELS_PER_PURGE)
      await enqueue(tx, { account_id: accountId, funnel_ids: ids.slice(at, at + FUNNELS_PER_PURGE) }, at)
  }
}

/**
 * Purges every cached page of a removed account's funnels: the origin's entries (on every instance, with
 * Redis) and the edge's, by each funnel's tag, which covers every step and path. Purging again is harmless;
 * an edge that answers 404 has nothing of them.
 */
export async function purgeRemovedFunnels(
  deps: Omit<EdgeCacheDeps, 'db'>,
  purge: RemovedFunnelsPurge,
): Promise<void> {
  for (const funnelId of purge.funnel_ids) deps.stepCache.forgetFunnel(funnelId)
  try {
    await purgeEdgeTags(deps.edge, purge.funnel_ids.map(funnelTag), deps.log)
  } catch (error) {
    const status = error instanceof UpstreamFailed && (error.additionalInfo as { status?: number })?.status
    if (status !== 404) throw error
  }
  deps.log.info(
    { account_id: purge.account_id, funnels: purge.funnel_ids.length },
    'cached pages of a removed account purged',
  )
}
