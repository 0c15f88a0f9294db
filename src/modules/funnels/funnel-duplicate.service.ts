import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { NotFound } from '../../platform/http/errors.js'
import { isActiveSubAccountOf } from '../accounts/accounts.service.js'
import { requireFunnel } from './funnel-access.service.js'
import { copySteps, copyTags } from './funnel-duplicate.repository.js'
import { copyPathCandidates } from './funnel-paths.service.js'
import { BASE_PATH_INDEXES, heldDefaultHostPaths, insertFunnel } from './funnels.repository.js'
import type { FunnelDetail } from './funnels.schemas.js'
import { type Caller, funnelDetail } from './funnels.service.js'
import type { FunnelWriteDeps } from './step-cache.js'

export const SUB_ACCOUNT_NOT_FOUND = 'Sub-account not found'
/** How many candidate paths are looked up at once, and how often a copy that lost a race is retried. */
const CANDIDATES_PER_LOOKUP = 20
const ATTEMPTS = 5

/**
 * The first of the copy's candidate base paths that no live funnel holds on the target account's default
 * host (the copy has no domain).
 */
async function freeCopyPath(db: Database, accountId: string, basePath: string): Promise<string> {
  for (let from = 0; ; from += CANDIDATES_PER_LOOKUP) {
    const candidates = copyPathCandidates(basePath, from, CANDIDATES_PER_LOOKUP)
    const held = await heldDefaultHostPaths(db, accountId, candidates)
    const free = candidates.find((path) => !held.has(path))
    if (free) return free
  }
}

/**
 * `POST /:id/duplicate`: a copy named `<name> (Copy)`, `inactive`, without a domain, with the steps and
 * their components; into `subAccountId` when given, which must be an active sub-account of the caller's
 * account (404 otherwise). Tags are the account's own, so only a copy within the account keeps them.
 */
export async function duplicateFunnel(
  deps: FunnelWriteDeps,
  caller: Caller,
  funnelId: string,
  subAccountId: string | undefined,
): Promise<FunnelDetail> {
  const { db } = deps
  const source = await requireFunnel(db, caller.account_id, funnelId)
  const accountId = subAccountId ?? caller.account_id
  if (subAccountId && !(await isActiveSubAccountOf(db, subAccountId, caller.account_id)))
    throw new NotFound(SUB_ACCOUNT_NOT_FOUND)
  for (let attempt = 1; ; attempt++) {
    const basePath = await freeCopyPath(db, accountId, source.basePath)
    try {
      const copy = await inTransaction(db, async (tx) => {
        const { id: _, createdAt: __, updatedAt: ___, deletedAt: ____, ...fields } = source
        const row = await insertFunnel(tx, {
          ...fields,
          accountId,
          name: `${source.name} (Copy)`,
          status: 'inactive',
          domainId: null,
          basePath,
          updatedBy: caller.uid,
        })
        await copySteps(
          tx,
          { accountId: source.accountId, funnelId: source.id },
          { accountId, funnelId: row.id },
        )
        if (accountId === source.accountId) await copyTags(tx, accountId, source.id, row.id)
        return row
      })
      deps.stepCache.forgetFunnel(copy.id)
      return funnelDetail(db, copy)
    } catch (error) {
      // Another copy took the path between the lookup and the insert: look again.
      const lostRace = BASE_PATH_INDEXES.some((index) => isUniqueViolation(error, index))
      if (!lostRace || attempt === ATTEMPTS) throw error
    }
  }
}
