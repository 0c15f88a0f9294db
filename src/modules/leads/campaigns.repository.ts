import { and, desc, eq, isNull, lt, not, or, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { selectPage } from '../../platform/db/page.js'
import { leadCampaigns } from './tables.js'

export type CampaignRow = typeof leadCampaigns.$inferSelect
export type CampaignListRow = CampaignRow & { lastLeadAt: Date | null }

const ofAccount = (accountId: string, id: string) =>
  and(eq(leadCampaigns.accountId, accountId), eq(leadCampaigns.id, id))

/**
 * The newest lead captured for the campaign: `last_lead_at`. Written with its tables' names: in a select
 * list Drizzle leaves columns unqualified, which inside this sub-select would name the lead's own.
 */
const lastLeadAt = sql<Date | null>`(
  select max(captured.created_time) from leads captured
  where captured.account_id = lead_campaigns.account_id and captured.campaign_id = lead_campaigns.id
    and captured.status = 'captured')`.mapWith((value: string | null) => (value ? new Date(value) : null))

/** The new campaign, or undefined when a live campaign (of any account) already claims the page and form. */
export async function insertCampaign(
  db: Database,
  accountId: string,
  values: { pageId: string; formId: string },
): Promise<CampaignRow | undefined> {
  try {
    const [row] = await db
      .insert(leadCampaigns)
      .values({ ...values, accountId })
      .returning()
    return row
  } catch (error) {
    if (isUniqueViolation(error, 'lead_campaigns_page_form_live')) return undefined
    throw error
  }
}

export async function findCampaign(
  db: Database,
  accountId: string,
  id: string,
): Promise<CampaignRow | undefined> {
  const [row] = await db.select().from(leadCampaigns).where(ofAccount(accountId, id))
  return row
}

/** The campaign as its view shows it, with `last_lead_at`. */
export async function findCampaignView(
  db: Database,
  accountId: string,
  id: string,
): Promise<CampaignListRow | undefined> {
  const [row] = await db
    .select({ campaign: leadCampaigns, lastLeadAt })
    .from(leadCampaigns)
    .where(ofAccount(accountId, id))
  return row && { ...row.campaign, lastLeadAt: row.lastLeadAt }
}

/**
 * The live campaign claiming a page and form: where a lead belongs. No account: by the provider's page and
 * form ids, as Meta's webhook posts them; one live campaign claims them across all accounts.
 */
export async function findLiveCampaignOfForm(
  db: Database,
  pageId: string,
  formId: string,
): Promise<CampaignRow | undefined> {
  const [row] = await db
    .select()
    .from(leadCampaigns)
    .where(
      and(eq(leadCampaigns.pageId, pageId), eq(leadCampaigns.formId, formId), not(leadCampaigns.isDeleted)),
    )
  return row
}

export function listCampaigns(
  db: Database,
  accountId: string,
  filter: { includeDeleted: boolean },
  window: { offset: number; limit: number },
) {
  const where = and(
    eq(leadCampaigns.accountId, accountId),
    filter.includeDeleted ? undefined : not(leadCampaigns.isDeleted),
  )
  return selectPage(
    db,
    db
      .select({ campaign: leadCampaigns, lastLeadAt })
      .from(leadCampaigns)
      .where(where)
      .orderBy(desc(leadCampaigns.createdAt), desc(leadCampaigns.id))
      .$dynamic(),
    { from: leadCampaigns, where },
    window,
  )
}

/** Soft-deletes the campaign (the spec's `is_deleted`); its leads stay. */
export async function markCampaignDeleted(
  db: Database,
  accountId: string,
  id: string,
): Promise<CampaignRow | undefined> {
  const [row] = await db
    .update(leadCampaigns)
    .set({ isDeleted: true, updatedAt: new Date() })
    .where(ofAccount(accountId, id))
    .returning()
  return row
}

/** Marks every live `socialnet_ads` campaign of the account `is_deleted`; how many. */
export async function markAccountCampaignsDeleted(db: Database, accountId: string): Promise<number> {
  const rows = await db
    .update(leadCampaigns)
    .set({ isDeleted: true, updatedAt: new Date() })
    .where(and(eq(leadCampaigns.accountId, accountId), not(leadCampaigns.isDeleted)))
    .returning({ id: leadCampaigns.id })
  return rows.length
}

/** Keeps the page token (sealed) obtained for the campaign's page, or forgets it (null) after a 190. */
export async function setCampaignPageToken(
  db: Database,
  accountId: string,
  id: string,
  sealed: string | null,
): Promise<void> {
  await db.update(leadCampaigns).set({ pageAccessToken: sealed }).where(ofAccount(accountId, id))
}

export async function setSubscriptionStatus(
  db: Database,
  accountId: string,
  id: string,
  status: CampaignRow['subscriptionStatus'],
  error: string | null,
): Promise<void> {
  await db
    .update(leadCampaigns)
    .set({ subscriptionStatus: status, subscriptionError: error, subscriptionCheckedAt: new Date() })
    .where(ofAccount(accountId, id))
}

/**
 * Takes the campaign's sync hold when no live run holds it (a hold older than `staleBefore` belongs to a
 * run that died): one sync per campaign at a time, across instances. Whether it was taken.
 */
export async function claimSync(
  db: Database,
  accountId: string,
  id: string,
  staleBefore: Date,
): Promise<boolean> {
  const rows = await db
    .update(leadCampaigns)
    .set({ syncStartedAt: new Date() })
    .where(
      and(
        ofAccount(accountId, id),
        or(isNull(leadCampaigns.syncStartedAt), lt(leadCampaigns.syncStartedAt, staleBefore)),
      ),
    )
    .returning({ id: leadCampaigns.id })
  return rows.length > 0
}

/**
 * Lets go of the sync hold, recording when the run ended (one that failed too: the next is due an interval
 * later, not every minute while Graph refuses).
 */
export async function releaseSync(db: Database, accountId: string, id: string): Promise<void> {
  await db
    .update(leadCampaigns)
    .set({ syncStartedAt: null, syncedAt: new Date() })
    .where(ofAccount(accountId, id))
}

/**
 * Live campaigns whose last sync finished before `before` (or never ran), oldest first. No account: the
 * periodic sweep across accounts.
 */
export async function findCampaignsDueForSync(
  db: Database,
  before: Date,
  limit: number,
): Promise<{ id: string; accountId: string }[]> {
  return db
    .select({ id: leadCampaigns.id, accountId: leadCampaigns.accountId })
    .from(leadCampaigns)
    .where(
      and(
        not(leadCampaigns.isDeleted),
        or(isNull(leadCampaigns.syncedAt), lt(leadCampaigns.syncedAt, before)),
      ),
    )
    .orderBy(sql`${leadCampaigns.syncedAt} asc nulls first`)
    .limit(limit)
}
