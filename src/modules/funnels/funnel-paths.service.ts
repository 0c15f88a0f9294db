import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { isId } from '../../platform/db/ids.js'
import { Conflict, Invalid } from '../../platform/http/errors.js'
import { requireOwnDomain } from './domains.service.js'
import { INVALID_FUNNEL_ID, normalisePath, PATH_ALREADY_IN_USE } from './funnel-access.service.js'
import { BASE_PATH_INDEXES, findPathHolder } from './funnels.repository.js'
import type { PathConflict, ValidatePathBody } from './funnels.schemas.js'

/** Where a base path is unique: a domain, or (null) the account's default host. */
export interface PathTarget {
  basePath: string
  domainId: string | null
  /** The funnel itself, when it is being changed. */
  excludeId?: string
}

/** The spec's 409 for a base path a live funnel already holds; routes answer it with `data`. */
export class PathInUse extends Conflict {
  constructor(
    readonly path: string,
    readonly holder: { id: string; name: string },
  ) {
    super(PATH_ALREADY_IN_USE)
  }

  body(): PathConflict {
    return {
      success: false,
      errno: 409,
      message: this.message,
      data: {
        available: false,
        path: this.path,
        conflicting_funnel: { _id: this.holder.id, name: this.holder.name },
      },
    }
  }
}

/** `POST /validate-path`: the normalised path when it is free on the host, else PathInUse. */
export async function validatePath(
  db: Database,
  accountId: string,
  input: ValidatePathBody,
): Promise<{ available: true; path: string }> {
  if (input.funnel_id !== undefined && !isId(input.funnel_id)) throw new Invalid(INVALID_FUNNEL_ID)
  const domainId = input.domain_id ?? null
  if (domainId) await requireOwnDomain(db, accountId, domainId)
  const target = { basePath: normalisePath(input.path), domainId, excludeId: input.funnel_id }
  const holder = await findPathHolder(db, accountId, target)
  if (holder) throw new PathInUse(target.basePath, holder)
  return { available: true, path: target.basePath }
}

/**
 * Runs a write that gives a funnel `target`'s base path. The unique index decides a race: the loser's
 * violation becomes the same 409 as a conflict seen before writing, naming the funnel that won. Should
 * that funnel be gone by the time it is looked up, the write is tried again.
 */
export async function refusingPathConflicts<T>(
  db: Database,
  accountId: string,
  target: PathTarget,
  write: () => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await write()
    } catch (error) {
      if (!BASE_PATH_INDEXES.some((index) => isUniqueViolation(error, index))) throw error
      const holder = await findPathHolder(db, accountId, target)
      if (holder) throw new PathInUse(target.basePath, holder)
      if (attempt === 3) throw error
    }
  }
}

/**
 * The base paths a copy of a funnel at `basePath` tries in turn: its own, then `-copy`, `-copy-2`, ...
 * (`/copy`, `/copy-2`, ... for the root path).
 */
export function copyPathCandidates(basePath: string, from: number, count: number): string[] {
  const stem = basePath === '/' ? '/copy' : `${basePath}-copy`
  return Array.from({ length: count }, (_, i) => {
    const n = from + i
    return n === 0 ? basePath : n === 1 ? stem : `${stem}-${n}`
  })
}
