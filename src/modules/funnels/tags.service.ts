import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import type { FunnelStatus } from './documents.schemas.js'
import type { StepCache } from './step-cache.js'
import {
  countOwnTagsForShare,
  deleteTag,
  insertOrFindTag,
  listTagsWithCounts,
  type TagWithCount,
} from './tags.repository.js'
import type { CreateTagBody, FunnelTag, TagsQuery } from './tags.schemas.js'

export const TAG_NOT_FOUND = 'Tag not found'

const tagView = (row: TagWithCount): FunnelTag => ({ _id: row.id, name: row.name, count: row.count })

/** Adds a tag to the account; a name it already has (in any case) returns that tag, `created: false`. */
export async function createTag(
  db: Database,
  accountId: string,
  input: CreateTagBody,
): Promise<{ tag: FunnelTag; created: boolean }> {
  const name = input.name.trim()
  if (!name) throw new Invalid('name must not be empty')
  const { row, created } = await insertOrFindTag(db, accountId, name)
  const { rows } = await listTagsWithCounts(db, accountId, { ids: [row.id] })
  return { tag: tagView(rows[0] ?? { id: row.id, name: row.name, count: 0 }), created }
}

export function listTagsPage(
  db: Database,
  accountId: string,
  query: TagsQuery,
): Promise<{ data: FunnelTag[]; pagination: Pagination }> {
  return paginate(
    query,
    (window) => listTagsWithCounts(db, accountId, { search: query.search }, window),
    tagView,
  )
}

/** Every tag of the account (only `ids` when given), counting its live funnels in `status` when given. */
export async function tagsWithCounts(
  db: Database,
  accountId: string,
  filter: { ids?: string[]; status?: FunnelStatus },
): Promise<FunnelTag[]> {
  return (await listTagsWithCounts(db, accountId, filter)).rows.map(tagView)
}

/**
 * Refuses (400 naming `field`) tag ids that are not all tags of the account. Inside a transaction, the
 * tags cannot be deleted before it ends.
 */
export async function requireOwnTags(db: Database, accountId: string, tagIds: string[], field = 'tags') {
  const distinct = [...new Set(tagIds)]
  if (distinct.length && (await countOwnTagsForShare(db, accountId, distinct)) !== distinct.length)
    throw new Invalid(`${field} must be tags of this account`)
}

/** Deletes the tag from the account and its funnels; those funnels are forgotten by the step cache. */
export async function removeTag(
  db: Database,
  cache: Pick<StepCache, 'forgetFunnel'>,
  accountId: string,
  tagId: string,
): Promise<void> {
  const funnelIds = await inTransaction(db, (tx) => deleteTag(tx, accountId, tagId))
  if (!funnelIds) throw new NotFound(TAG_NOT_FOUND)
  for (const funnelId of funnelIds) cache.forgetFunnel(funnelId)
}
