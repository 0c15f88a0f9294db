import { and, eq, inArray, not, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { leadCampaigns } from './tables.js'

/** The pages of the account's campaigns (deleted ones too), each with a page token kept for it, if any. */
export async function listCampaignPages(
  db: Database,
  accountId: string,
): Promise<{ pageId: string; pageAccessToken: string | null }[]> {
  return db
    .select({
      pageId: leadCampaigns.pageId,
      pageAccessToken: sql<string | null>`max(${leadCampaigns.pageAccessToken})`,
    })
    .from(leadCampaigns)
    .where(eq(leadCampaigns.accountId, accountId))
    .groupBy(leadCampaigns.pageId)
    .orderBy(leadCampaigns.pageId)
}

/**
 * Whether a live campaign of an account other than `accountIds` uses the page: its leads still need our app
 * subscribed. Across accounts by nature, as a page's live campaigns are (`lead_campaigns_page_form_live`).
 */
export async function isPageUsedElsewhere(
  db: Database,
  pageId: string,
  accountIds: string[],
): Promise<boolean> {
  const rows = await db
    .select({ id: leadCampaigns.id })
    .from(leadCampaigns)
    .where(
      and(
        eq(leadCampaigns.pageId, pageId),
        not(leadCampaigns.isDeleted),
        not(inArray(leadCampaigns.accountId, accountIds)),
      ),
    )
    .limit(1)
  return rows.length > 0
}
