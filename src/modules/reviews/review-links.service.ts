import type { Database } from '../../platform/db/connection.js'
import { Conflict, Invalid, NotFound } from '../../platform/http/errors.js'
import type { ReviewPlatform } from './documents.schemas.js'
import {
  deleteLink,
  findLinkedPlatforms,
  findLinksForPlatform,
  insertLink,
  listLinks,
  type ReviewLinkRow,
  updateLink,
} from './review-links.repository.js'
import type { CreateBody, ReviewLink } from './review-links.schemas.js'

export const REVIEW_LINK_NOT_FOUND = 'Review link not found'

const linkView = (row: ReviewLinkRow): ReviewLink => ({
  _id: row.id,
  account_id: row.accountId,
  platform: row.platform,
  url: row.url,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

/** Customers are sent to it: only a web address, never `javascript:` or another scheme. */
function assertWebUrl(url: string): void {
  if (!/^https?:\/\//i.test(url)) throw new Invalid('url must be an http or https URL')
}

export async function createLink(db: Database, accountId: string, input: CreateBody): Promise<ReviewLink> {
  assertWebUrl(input.url)
  const row = await insertLink(db, accountId, input.platform, input.url)
  if (!row) throw new Conflict(`A review link for ${input.platform} already exists`)
  return linkView(row)
}

export async function listAccountLinks(db: Database, accountId: string): Promise<ReviewLink[]> {
  return (await listLinks(db, accountId)).map(linkView)
}

export async function changeLink(db: Database, accountId: string, linkId: string, url: string) {
  assertWebUrl(url)
  const row = await updateLink(db, accountId, linkId, url)
  if (!row) throw new NotFound(REVIEW_LINK_NOT_FOUND)
  return linkView(row)
}

export async function removeLink(db: Database, accountId: string, linkId: string): Promise<void> {
  if (!(await deleteLink(db, accountId, linkId))) throw new NotFound(REVIEW_LINK_NOT_FOUND)
}

/**
 * The review URL a request of `accountIds[0]` leads to: the account's own link for the platform, else that
 * of the next account named (its parent, whose configuration it may use).
 */
export async function reviewUrlFor(
  db: Database,
  accountIds: string[],
  platform: ReviewPlatform,
): Promise<string | undefined> {
  const links = await findLinksForPlatform(db, accountIds, platform)
  for (const accountId of accountIds) {
    const link = links.find((l) => l.accountId === accountId)
    if (link) return link.url
  }
  return undefined
}

/** The platforms none of the accounts has a review link for. */
export async function platformsWithoutLink(
  db: Database,
  accountIds: string[],
  platforms: readonly ReviewPlatform[],
): Promise<ReviewPlatform[]> {
  const linked = new Set(await findLinkedPlatforms(db, accountIds))
  return platforms.filter((platform) => !linked.has(platform))
}
