import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import {
  type FunnelRow,
  findLiveFunnel,
  findStepOfLiveFunnel,
  type StepRow,
} from './funnel-access.repository.js'

/** Third-party apps need `sites.read` to read funnels and `sites.write` to change them. */
export const SITES_READ = { oauthScope: 'sites.read' } as const
export const SITES_WRITE = { oauthScope: 'sites.write' } as const

/** The spec's funnel error messages, one place for every feature of the module. */
export const INVALID_FUNNEL_ID = 'Invalid funnel ID'
export const FUNNEL_NOT_FOUND = 'Funnel not found'
export const PATH_ALREADY_IN_USE = 'Path already in use'
export const ADMIN_PERMISSION_REQUIRED = 'Admin permission required for template category updates'
/** Not in the spec's table, which names no step error; worded like its funnel message. */
export const STEP_NOT_FOUND = 'Step not found'

/**
 * The caller's live funnel: 400 `Invalid funnel ID` for a malformed id, 404 `Funnel not found` for an
 * unknown, soft-deleted or another account's funnel (ids do not leak).
 */
export async function requireFunnel(db: Database, accountId: string, funnelId: string): Promise<FunnelRow> {
  if (!isId(funnelId)) throw new Invalid(INVALID_FUNNEL_ID)
  const funnel = await findLiveFunnel(db, accountId, funnelId)
  if (!funnel) throw new NotFound(FUNNEL_NOT_FOUND)
  return funnel
}

/**
 * A step of the caller's live funnel; when `funnelId` is given the step must belong to it. Steps of a
 * soft-deleted funnel are inaccessible (the state table's "steps become inaccessible").
 */
export async function requireStep(
  db: Database,
  accountId: string,
  stepId: string,
  funnelId?: string,
): Promise<{ step: StepRow; funnel: FunnelRow }> {
  if (funnelId !== undefined) await requireFunnel(db, accountId, funnelId)
  const found = isId(stepId) ? await findStepOfLiveFunnel(db, accountId, stepId) : undefined
  if (!found || (funnelId !== undefined && found.funnel.id !== funnelId)) throw new NotFound(STEP_NOT_FOUND)
  return found
}

/**
 * A funnel base path or step path as stored and compared: lower case, one leading slash, no trailing
 * slash, no repeated slashes ("Shop//Sale/" -> "/shop/sale"; "" and "/" -> "/").
 */
export function normalisePath(path: string): string {
  const segments = path.trim().toLowerCase().split('/').filter(Boolean)
  return `/${segments.join('/')}`
}

/** Where a step is served: its funnel's base path, then its own path (the edge's `pathname`). */
export function fullStepPath(basePath: string, stepPath: string): string {
  return normalisePath(`${basePath}/${stepPath}`)
}
