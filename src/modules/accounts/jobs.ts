import type { Platform } from '../../platform/context.js'
import {
  ACCOUNT_REMOVAL_JOB,
  type AccountRemovalJob,
  type RemovalDeps,
  runRemoval,
} from './account-removal.service.js'

/**
 * How long one run of the removal job deletes before it queues its continuation: well below the run's
 * lock (REMOVAL_LOCK_SECONDS), whose expiry would otherwise start a second run beside it.
 */
const REMOVAL_SLICE_MS = 5 * 60_000
const REMOVAL_LOCK_SECONDS = 15 * 60

/** What the account removal's route and job are given. */
export const removalDepsOf = (platform: Platform): RemovalDeps => ({
  db: platform.db,
  queue: platform.queue,
  access: platform.accountAccess,
  changes: platform.changes,
  log: platform.log,
  settings: { ...platform.config.accountRemoval, sliceMs: REMOVAL_SLICE_MS },
})

/** The accounts module's jobs; defined before the queue starts (the app's onReady). */
export function defineAccountsJobs(platform: Platform): void {
  const deps = removalDepsOf(platform)
  platform.queue.define({
    name: ACCOUNT_REMOVAL_JOB,
    handle: (data: AccountRemovalJob, { id }) => runRemoval(deps, data.account_id, id),
    // A run goes on from what is left, so retrying is always safe; a failure is recorded on the removal.
    retryLimit: 10,
    retryDelaySeconds: 2,
    retryBackoff: true,
    lockSeconds: REMOVAL_LOCK_SECONDS,
  })
}
