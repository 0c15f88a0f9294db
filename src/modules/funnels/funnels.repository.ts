import { and, asc, desc, eq, ilike, inArray, isNotNull, isNull, ne, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { containsPattern } from '../../platform/db/search.js'
import type { FunnelStatus } from './documents.schemas.js'
import type { FunnelRow } from './funnel-access.repository.js'
import {
  DEFAULT_HOST_BASE_PATH_INDEX,
  DOMAIN_BASE_PATH_INDEX,
  funnelSteps,
  funnels,
  funnelTagLinks,
  funnelTags,
} from './tables.js'

export type NewFunnel = typeof funnels.$inferInsert
export type NewStep = typeof funnelSteps.$inferInsert
export type FunnelPatch = Partial<Omit<NewFunnel, 'id' | 'accountId' | 'createdAt'>>

/** The unique indexes that keep a base path to one live funnel per host. */
export const BASE_PATH_INDEXES = [DOMAIN_BASE_PATH_INDEX, DEFAULT_HOST_BASE_PATH_INDEX]

export interface FunnelFilter {
  search?: string
  status?: FunnelStatus
  /** Funnels carrying any of these tags. */
  tagIds?: string[]
  domainConnected?: boolean
}

/** The account's live funnels that match, most recently updated first. */
export async function listFunnels(
  db: Database,
  accountId: string,
  filter: FunnelFilter,
  window: { offset: number; limit: number },
): Promise<{ rows: FunnelRow[]; total: number }> {
  const connected = filter.domainConnected
  const where = and(
    eq(funnels.accountId, accountId),
    eq(funnels.deleted, false),
    filter.search ? ilike(funnels.name, containsPattern(filter.search)) : undefined,
    filter.status ? eq(funnels.status, filter.status) : undefined,
    filter.tagIds
      ? inArray(
          funnels.id,
          db
            .select({ id: funnelTagLinks.funnelId })
            .from(funnelTagLinks)
            .where(
              and(eq(funnelTagLinks.accountId, accountId), inArray(funnelTagLinks.tagId, filter.tagIds)),
            ),
        )
      : undefined,
    connected === undefined ? undefined : connected ? isNotNull(funnels.domainId) : isNull(funnels.domainId),
  )
  return selectPage(
    db,
    db.select().from(funnels).where(where).orderBy(desc(funnels.updatedAt), desc(funnels.id)).$dynamic(),
    { from: funnels, where },
    window,
  )
}

/** The steps of the funnels, each funnel's in order. */
export function stepsOfFunnels(db: Database, accountId: string, funnelIds: string[]) {
  if (funnelIds.length === 0) return Promise.resolve([])
  return db
    .select({
      id: funnelSteps.id,
      funnelId: funnelSteps.funnelId,
      name: funnelSteps.name,
      path: funnelSteps.path,
      type: funnelSteps.type,
      order: funnelSteps.order,
      seo: funnelSteps.seo,
    })
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, accountId), inArray(funnelSteps.funnelId, funnelIds)))
    .orderBy(asc(funnelSteps.funnelId), asc(funnelSteps.order), asc(funnelSteps.id))
}

/** The tags of the funnels, by name. */
export function tagsOfFunnels(db: Database, accountId: string, funnelIds: string[]) {
  if (funnelIds.length === 0) return Promise.resolve([])
  return db
    .select({ funnelId: funnelTagLinks.funnelId, id: funnelTags.id, name: funnelTags.name })
    .from(funnelTagLinks)
    .innerJoin(
      funnelTags,
      and(eq(funnelTags.accountId, funnelTagLinks.accountId), eq(funnelTags.id, funnelTagLinks.tagId)),
    )
    .where(and(eq(funnelTagLinks.accountId, accountId), inArray(funnelTagLinks.funnelId, funnelIds)))
    .orderBy(asc(sql`lower(${funnelTags.name})`), asc(funnelTags.id))
}

/**
 * The live funnel that holds `basePath` on the host: the domain's, or the account's default host when
 * `domainId` is null; `excludeId` left out.
 */
export async function findPathHolder(
  db: Database,
  accountId: string,
  target: { basePath: string; domainId: string | null; excludeId?: string },
): Promise<{ id: string; name: string } | undefined> {
  const [row] = await db
    .select({ id: funnels.id, name: funnels.name })
    .from(funnels)
    .where(
      and(
        eq(funnels.accountId, accountId),
        eq(funnels.deleted, false),
        eq(funnels.basePath, target.basePath),
        target.domainId === null ? isNull(funnels.domainId) : eq(funnels.domainId, target.domainId),
        target.excludeId ? ne(funnels.id, target.excludeId) : undefined,
      ),
    )
  return row
}

/** Which of `basePaths` live funnels of the account hold on its default host. */
export async function heldDefaultHostPaths(
  db: Database,
  accountId: string,
  basePaths: string[],
): Promise<Set<string>> {
  const rows = await db
    .select({ basePath: funnels.basePath })
    .from(funnels)
    .where(
      and(
        eq(funnels.accountId, accountId),
        eq(funnels.deleted, false),
        isNull(funnels.domainId),
        inArray(funnels.basePath, basePaths),
      ),
    )
  return new Set(rows.map((row) => row.basePath))
}

export async function insertFunnel(tx: Database, values: NewFunnel): Promise<FunnelRow> {
  const [row] = await tx.insert(funnels).values(values).returning()
  return row as FunnelRow
}

export async function insertSteps(tx: Database, steps: NewStep[]): Promise<void> {
  if (steps.length) await tx.insert(funnelSteps).values(steps)
}

/** Gives the funnel exactly these tags. */
export async function setFunnelTags(tx: Database, accountId: string, funnelId: string, tagIds: string[]) {
  await tx
    .delete(funnelTagLinks)
    .where(and(eq(funnelTagLinks.accountId, accountId), eq(funnelTagLinks.funnelId, funnelId)))
  const distinct = [...new Set(tagIds)]
  if (distinct.length)
    await tx.insert(funnelTagLinks).values(distinct.map((tagId) => ({ accountId, funnelId, tagId })))
}

/** Changes a live funnel of the account; undefined when there is none. */
export async function updateLiveFunnel(
  tx: Database,
  accountId: string,
  funnelId: string,
  patch: FunnelPatch,
): Promise<FunnelRow | undefined> {
  const [row] = await tx
    .update(funnels)
    .set({ ...patch, updatedAt: new Date() })
    .where(and(eq(funnels.accountId, accountId), eq(funnels.id, funnelId), eq(funnels.deleted, false)))
    .returning()
  return row
}
