import type { Platform } from '../../platform/context.js'
import { onAccountRemoved, PROVIDER_CLEAN_UP_RETRIES } from '../accounts/account-removal.service.js'
import {
  purgeRemovedFunnels,
  queueRemovedFunnelsPurges,
  type RemovedFunnelsPurge,
} from './edge-cache.service.js'
import { clicksRetention } from './retention.repository.js'
import { stepCacheOf } from './step-cache.js'

/** Purges the cached pages of a removed account's funnels, at the origin and the edge (`RemovedFunnelsPurge`). */
export const PURGE_REMOVED_FUNNELS_JOB = 'funnels.purge-removed-funnels'

/** The funnels module's jobs and its tables' retention. */
export function defineFunnelsJobs(platform: Platform): void {
  platform.retention.register(clicksRetention(platform.config.retention.shortLinkClicks))
  const purging = { stepCache: stepCacheOf(platform), edge: platform.config.edge, log: platform.log }
  platform.queue.define({
    name: PURGE_REMOVED_FUNNELS_JOB,
    handle: (data: RemovedFunnelsPurge) => purgeRemovedFunnels(purging, data),
    ...PROVIDER_CLEAN_UP_RETRIES,
  })
  onAccountRemoved(platform.changes, (tx, accountIds) =>
    queueRemovedFunnelsPurges(tx, accountIds, (executor, purge, part) =>
      platform.queue.enqueue(executor, PURGE_REMOVED_FUNNELS_JOB, purge, {
        singletonKey: `${purge.account_id}:${part}`,
      }),
    ),
  )
}
