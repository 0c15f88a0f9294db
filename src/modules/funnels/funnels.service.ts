import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Forbidden, Invalid, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import { userHasPermission } from '../accounts/accounts.service.js'
import { FUNNEL_STATUSES } from './documents.schemas.js'
import { findDomain } from './domains.repository.js'
import { requireOwnDomain } from './domains.service.js'
import type { FunnelRow } from './funnel-access.repository.js'
import {
  ADMIN_PERMISSION_REQUIRED,
  FUNNEL_NOT_FOUND,
  normalisePath,
  requireFunnel,
} from './funnel-access.service.js'
import { refusingPathConflicts } from './funnel-paths.service.js'
import {
  type FunnelPatch,
  insertFunnel,
  insertSteps,
  listFunnels,
  setFunnelTags,
  stepsOfFunnels,
  tagsOfFunnels,
  updateLiveFunnel,
} from './funnels.repository.js'
import type {
  CreateFunnelBody,
  Filters,
  FiltersQuery,
  FunnelDeleted,
  FunnelDetail,
  FunnelListItem,
  FunnelsQuery,
  UpdateFunnelBody,
} from './funnels.schemas.js'
import { type FunnelWriteDeps, inFunnelWrite } from './step-cache.js'
import { requireOwnTags, tagsWithCounts } from './tags.service.js'

/** Who calls: the account scoping everything, and the user recorded as `updated_by`. */
export interface Caller {
  account_id: string
  uid: string
}

const funnelFields = (row: FunnelRow) => ({
  _id: row.id,
  name: row.name,
  domain_id: row.domainId,
  base_path: row.basePath,
  status: row.status,
  favicon: row.favicon,
  header_tracking_code: row.headerTrackingCode,
  footer_tracking_code: row.footerTrackingCode,
  live_chat_widget: row.liveChatWidget,
  category: row.category,
  account_id: row.accountId,
  deleted: row.deleted,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
  updated_by: row.updatedBy,
})

const stepSummary = (step: Awaited<ReturnType<typeof stepsOfFunnels>>[number]) => ({
  _id: step.id,
  name: step.name,
  path: step.path,
  type: step.type,
  order: step.order,
})

/** `tags` of the list and filters: comma-separated ids; 400 naming the field for anything else. */
function tagIdsOf(tags: string | undefined): string[] | undefined {
  if (tags === undefined) return undefined
  const ids = tags
    .split(',')
    .map((id) => id.trim())
    .filter(Boolean)
  if (!ids.every(isId)) throw new Invalid('tags must be comma-separated tag ids')
  return ids.length ? ids : undefined
}

export async function listFunnelsPage(
  db: Database,
  accountId: string,
  query: FunnelsQuery,
): Promise<{ data: FunnelListItem[]; pagination: Pagination }> {
  const filter = {
    search: query.search,
    status: query.status,
    tagIds: tagIdsOf(query.tags),
    domainConnected: query.domain_connected,
  }
  const page = await paginate(
    query,
    (window) => listFunnels(db, accountId, filter, window),
    (row) => row,
  )
  const ids = page.data.map((row) => row.id)
  const [steps, tags] = await Promise.all([
    stepsOfFunnels(db, accountId, ids),
    tagsOfFunnels(db, accountId, ids),
  ])
  const data = page.data.map((row) => ({
    ...funnelFields(row),
    tags: tags.filter((tag) => tag.funnelId === row.id).map((tag) => tag.id),
    steps: steps.filter((step) => step.funnelId === row.id).map(stepSummary),
  }))
  return { data, pagination: page.pagination }
}

/**
 * The list's filter choices: every status, and the account's tags (only those of `tags` when given), each
 * counting its live funnels (in `status` when given).
 */
export async function funnelFilters(db: Database, accountId: string, query: FiltersQuery): Promise<Filters> {
  const tags = await tagsWithCounts(db, accountId, { ids: tagIdsOf(query.tags), status: query.status })
  return { statuses: [...FUNNEL_STATUSES], tags }
}

/** A funnel as `GET /:id` shows it: domain and tags populated, steps with seo in order. */
export async function funnelDetail(db: Database, row: FunnelRow): Promise<FunnelDetail> {
  const [domain, tags, steps] = await Promise.all([
    row.domainId ? findDomain(db, row.accountId, row.domainId) : undefined,
    tagsOfFunnels(db, row.accountId, [row.id]),
    stepsOfFunnels(db, row.accountId, [row.id]),
  ])
  return {
    ...funnelFields(row),
    domain: domain ? { _id: domain.id, name: domain.name, ssl_enabled: domain.sslEnabled } : null,
    tags: tags.map((tag) => ({ _id: tag.id, name: tag.name })),
    steps: steps.map((step) => ({ ...stepSummary(step), seo: step.seo })),
  }
}

export async function getFunnel(db: Database, accountId: string, funnelId: string): Promise<FunnelDetail> {
  return funnelDetail(db, await requireFunnel(db, accountId, funnelId))
}

/** A base path from a funnel's name, for a create that gives none ("Spring Sale!" -> "/spring-sale"). */
const pathFromName = (name: string) =>
  normalisePath(
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, ''),
  )

export async function createFunnel(
  deps: FunnelWriteDeps,
  caller: Caller,
  input: CreateFunnelBody,
): Promise<FunnelDetail> {
  const { db } = deps
  const accountId = caller.account_id
  const domainId = input.domain_id ?? null
  const steps = (input.steps ?? []).map((step, index) => ({
    name: step.name,
    path: normalisePath(step.path),
    type: step.type ?? 'page',
    order: step.order ?? index,
  }))
  if (new Set(steps.map((step) => step.path)).size !== steps.length)
    throw new Invalid('steps must have different paths')
  const basePath = normalisePath(input.base_path ?? pathFromName(input.name))
  const created = await refusingPathConflicts(db, accountId, { basePath, domainId }, () =>
    inTransaction(db, async (tx) => {
      if (domainId) await requireOwnDomain(tx, accountId, domainId)
      await requireOwnTags(tx, accountId, input.tags ?? [])
      const row = await insertFunnel(tx, {
        accountId,
        name: input.name,
        domainId,
        basePath,
        status: input.status ?? 'draft',
        favicon: input.favicon ?? null,
        headerTrackingCode: input.header_tracking_code ?? null,
        footerTrackingCode: input.footer_tracking_code ?? null,
        liveChatWidget: input.live_chat_widget ?? null,
        updatedBy: caller.uid,
      })
      await insertSteps(
        tx,
        steps.map((step) => ({ ...step, accountId, funnelId: row.id })),
      )
      await setFunnelTags(tx, accountId, row.id, input.tags ?? [])
      return row
    }),
  )
  deps.stepCache.forgetFunnel(created.id)
  return funnelDetail(db, created)
}

/**
 * `PUT /:id`: the fields given change; `updated_by` becomes the caller. Changing `category` (setting a
 * different value) needs the caller's `funnel_templates:admin` permission. `conflicts` is accepted and
 * ignored: a base path taken on the host is always refused with 409.
 */
export async function updateFunnel(
  deps: FunnelWriteDeps,
  caller: Caller,
  funnelId: string,
  input: UpdateFunnelBody,
): Promise<FunnelDetail> {
  const { db } = deps
  const accountId = caller.account_id
  const current = await requireFunnel(db, accountId, funnelId)
  if (
    input.category !== undefined &&
    input.category !== current.category &&
    !(await userHasPermission(db, caller.uid, 'funnel_templates:admin'))
  )
    throw new Forbidden(ADMIN_PERMISSION_REQUIRED)
  const patch: FunnelPatch = {
    name: input.name,
    status: input.status,
    favicon: input.favicon,
    headerTrackingCode: input.header_tracking_code,
    footerTrackingCode: input.footer_tracking_code,
    liveChatWidget: input.live_chat_widget,
    domainId: input.domain_id,
    basePath: input.base_path === undefined ? undefined : normalisePath(input.base_path),
    category: input.category,
    updatedBy: caller.uid,
  }
  const target = {
    basePath: patch.basePath ?? current.basePath,
    domainId: input.domain_id === undefined ? current.domainId : input.domain_id,
    excludeId: funnelId,
  }
  const updated = await refusingPathConflicts(db, accountId, target, () =>
    inFunnelWrite(deps, funnelId, async (tx) => {
      if (input.domain_id) await requireOwnDomain(tx, accountId, input.domain_id)
      if (input.tags) await requireOwnTags(tx, accountId, input.tags)
      const row = await updateLiveFunnel(tx, accountId, funnelId, patch)
      if (!row) throw new NotFound(FUNNEL_NOT_FOUND)
      if (input.tags) await setFunnelTags(tx, accountId, funnelId, input.tags)
      return row
    }),
  )
  return funnelDetail(db, updated)
}

/**
 * Soft delete: the funnel keeps its data, but it and its steps are not found any more, and its base path
 * is free for another funnel.
 */
export async function deleteFunnel(
  deps: FunnelWriteDeps,
  caller: Caller,
  funnelId: string,
): Promise<FunnelDeleted> {
  await requireFunnel(deps.db, caller.account_id, funnelId)
  const deletedAt = new Date()
  const row = await updateLiveFunnel(deps.db, caller.account_id, funnelId, {
    deleted: true,
    deletedAt,
    updatedBy: caller.uid,
  })
  // Another request deleted it since it was read.
  if (!row) throw new NotFound(FUNNEL_NOT_FOUND)
  deps.stepCache.forgetFunnel(funnelId)
  return { _id: funnelId, deleted: true, deleted_at: deletedAt.toISOString() }
}
