import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, Invalid, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import {
  type DomainRow,
  deleteDomain,
  findDefaultHostClash,
  findDomain,
  insertDomain,
  listDomains,
  lockDomain,
} from './domains.repository.js'
import type { CreateDomainBody, DomainsQuery, FunnelDomain } from './domains.schemas.js'
import { PATH_ALREADY_IN_USE } from './funnel-access.service.js'
import type { StepCache } from './step-cache.js'
import { DEFAULT_HOST_BASE_PATH_INDEX } from './tables.js'

export const DOMAIN_NOT_FOUND = 'Domain not found'
export const DOMAIN_TAKEN = 'Domain name already in use'
export const INVALID_HOSTNAME = 'name must be a hostname such as shop.example.com'

// Dot-separated labels of letters, digits and inner hyphens; a top-level label that starts with a letter
// (so no IP address), at least two labels, 253 characters at most.
const LABEL = '[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?'
const HOSTNAME = new RegExp(`^(?=.{1,253}$)(?:${LABEL}\\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

export const domainView = (row: DomainRow): FunnelDomain => ({
  _id: row.id,
  name: row.name,
  ssl_enabled: row.sslEnabled,
  created_at: row.createdAt.toISOString(),
})

/** Adds a custom domain to the account; a hostname belongs to one account only (409 when taken). */
export async function createDomain(
  db: Database,
  accountId: string,
  input: CreateDomainBody,
): Promise<FunnelDomain> {
  const name = input.name.trim().toLowerCase()
  if (!HOSTNAME.test(name)) throw new Invalid(INVALID_HOSTNAME)
  const row = await insertDomain(db, accountId, { name, sslEnabled: input.ssl_enabled ?? false })
  if (!row) throw new Conflict(DOMAIN_TAKEN, { name })
  return domainView(row)
}

export function listDomainsPage(
  db: Database,
  accountId: string,
  query: DomainsQuery,
): Promise<{ data: FunnelDomain[]; pagination: Pagination }> {
  return paginate(
    query,
    (window) => listDomains(db, accountId, { search: query.search, ...window }),
    domainView,
  )
}

/**
 * A domain of the account, for a funnel to be served on; 400 naming `field` otherwise. Inside a
 * transaction, the domain cannot be deleted before it ends.
 */
export async function requireOwnDomain(
  db: Database,
  accountId: string,
  domainId: string,
  field = 'domain_id',
): Promise<DomainRow> {
  const domain = await findDomain(db, accountId, domainId, { forShare: true })
  if (!domain) throw new Invalid(`${field} must be a domain of this account`)
  return domain
}

/** Deletes the domain; its funnels are left without one and forgotten by the step cache once committed. */
export async function removeDomain(
  db: Database,
  cache: Pick<StepCache, 'forgetFunnel'>,
  accountId: string,
  domainId: string,
): Promise<void> {
  const funnelIds = await inTransaction(db, async (tx) => {
    if (!(await lockDomain(tx, accountId, domainId))) throw new NotFound(DOMAIN_NOT_FOUND)
    // Its funnels move to the default host: not onto a path a funnel there holds (the unique index).
    const clash = await findDefaultHostClash(tx, accountId, domainId)
    if (clash) {
      throw new Conflict(PATH_ALREADY_IN_USE, {
        path: clash.path,
        conflicting_funnel: { _id: clash.holderId, name: clash.holderName },
      })
    }
    return deleteDomain(tx, accountId, domainId)
  }).catch((error: unknown) => {
    // A funnel created on the default host with one of those paths since the check: the index refused.
    if (isUniqueViolation(error, DEFAULT_HOST_BASE_PATH_INDEX)) throw new Conflict(PATH_ALREADY_IN_USE)
    throw error
  })
  for (const funnelId of funnelIds) cache.forgetFunnel(funnelId)
}
