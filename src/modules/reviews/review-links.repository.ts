import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import type { ReviewPlatform } from './documents.schemas.js'
import { reviewLinks } from './tables.js'

export type ReviewLinkRow = typeof reviewLinks.$inferSelect

const ofAccount = (accountId: string, linkId: string) =>
  and(eq(reviewLinks.accountId, accountId), eq(reviewLinks.id, linkId))

/** The new link, or none when the account has one for the platform already. */
export async function insertLink(db: Database, accountId: string, platform: ReviewPlatform, url: string) {
  const [row] = await db
    .insert(reviewLinks)
    .values({ accountId, platform, url })
    .onConflictDoNothing()
    .returning()
  return row
}

export function listLinks(db: Database, accountId: string): Promise<ReviewLinkRow[]> {
  return db
    .select()
    .from(reviewLinks)
    .where(eq(reviewLinks.accountId, accountId))
    .orderBy(asc(reviewLinks.platform))
}

/** The accounts' links for `platform`, to pick the first account's that has one. */
export function findLinksForPlatform(db: Database, accountIds: string[], platform: ReviewPlatform) {
  return db
    .select({ accountId: reviewLinks.accountId, url: reviewLinks.url })
    .from(reviewLinks)
    .where(and(inArray(reviewLinks.accountId, accountIds), eq(reviewLinks.platform, platform)))
}

export async function findLinkedPlatforms(db: Database, accountIds: string[]): Promise<ReviewPlatform[]> {
  const rows = await db
    .selectDistinct({ platform: reviewLinks.platform })
    .from(reviewLinks)
    .where(inArray(reviewLinks.accountId, accountIds))
  return rows.map((row) => row.platform)
}

export async function updateLink(db: Database, accountId: string, linkId: string, url: string) {
  const [row] = await db.update(reviewLinks).set({ url }).where(ofAccount(accountId, linkId)).returning()
  return row
}

export async function deleteLink(db: Database, accountId: string, linkId: string): Promise<boolean> {
  const rows = await db
    .delete(reviewLinks)
    .where(ofAccount(accountId, linkId))
    .returning({ id: reviewLinks.id })
  return rows.length === 1
}
