import { and, asc, count, eq, ilike, inArray, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { insertOrFind } from '../../platform/db/insert-or-find.js'
import { selectPage } from '../../platform/db/page.js'
import { containsPattern } from '../../platform/db/search.js'
import type { FunnelStatus } from './documents.schemas.js'
import { funnels, funnelTagLinks, funnelTags } from './tables.js'

export type TagRow = typeof funnelTags.$inferSelect
export interface TagWithCount {
  id: string
  name: string
  count: number
}

const lowerName = sql<string>`lower(${funnelTags.name})`

/** Inserts the tag, or finds the account's tag of that name (in any case). */
export function insertOrFindTag(db: Database, accountId: string, name: string) {
  return insertOrFind(
    db,
    funnelTags,
    { accountId, name },
    and(eq(funnelTags.accountId, accountId), eq(lowerName, name.toLowerCase())),
  )
}

export interface TagFilter {
  search?: string
  /** Only these tags. */
  ids?: string[]
  /** Count only the funnels in this status. */
  status?: FunnelStatus
}

/** The account's tags, by name, each with the number of its live funnels (in `status` when given). */
export async function listTagsWithCounts(
  db: Database,
  accountId: string,
  filter: TagFilter,
  window?: { offset: number; limit: number },
): Promise<{ rows: TagWithCount[]; total: number }> {
  const where = and(
    eq(funnelTags.accountId, accountId),
    filter.ids ? inArray(funnelTags.id, filter.ids) : undefined,
    filter.search ? ilike(funnelTags.name, containsPattern(filter.search)) : undefined,
  )
  const counted = and(
    eq(funnels.accountId, funnelTagLinks.accountId),
    eq(funnels.id, funnelTagLinks.funnelId),
    eq(funnels.deleted, false),
    filter.status ? eq(funnels.status, filter.status) : undefined,
  )
  const query = db
    .select({ id: funnelTags.id, name: funnelTags.name, count: count(funnels.id) })
    .from(funnelTags)
    .leftJoin(
      funnelTagLinks,
      and(eq(funnelTagLinks.accountId, funnelTags.accountId), eq(funnelTagLinks.tagId, funnelTags.id)),
    )
    .leftJoin(funnels, counted)
    .where(where)
    .groupBy(funnelTags.accountId, funnelTags.id)
    .orderBy(asc(lowerName), asc(funnelTags.id))
    .$dynamic()
  if (!window) {
    const rows = await query
    return { rows, total: rows.length }
  }
  return selectPage(db, query, { from: funnelTags, where }, window)
}

/**
 * How many of `tagIds` (distinct) are tags of the account, locking those against deletion until the
 * transaction ends (a funnel is taking them).
 */
export async function countOwnTagsForShare(
  db: Database,
  accountId: string,
  tagIds: string[],
): Promise<number> {
  const rows = await db
    .select({ id: funnelTags.id })
    .from(funnelTags)
    .where(and(eq(funnelTags.accountId, accountId), inArray(funnelTags.id, tagIds)))
    .for('key share')
  return rows.length
}

/**
 * Deletes the tag (its links to funnels go with it) and returns the ids of the funnels that carried it,
 * or undefined when the account has no such tag. The tag row is locked first so that no funnel takes
 * the tag between the listing and the delete.
 */
export async function deleteTag(
  tx: Database,
  accountId: string,
  tagId: string,
): Promise<string[] | undefined> {
  const [locked] = await tx
    .select({ id: funnelTags.id })
    .from(funnelTags)
    .where(and(eq(funnelTags.accountId, accountId), eq(funnelTags.id, tagId)))
    .for('update')
  if (!locked) return undefined
  const carriers = await tx
    .select({ id: funnelTagLinks.funnelId })
    .from(funnelTagLinks)
    .where(and(eq(funnelTagLinks.accountId, accountId), eq(funnelTagLinks.tagId, tagId)))
  await tx.delete(funnelTags).where(and(eq(funnelTags.accountId, accountId), eq(funnelTags.id, tagId)))
  return carriers.map((link) => link.id)
}
