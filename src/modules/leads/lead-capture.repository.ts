import { and, eq, getTableColumns, gte, inArray, lte, ne, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { keysetList, type ListWindow, placeField, selectListPage } from '../../platform/db/page.js'
import { type LEAD_STATUSES, leads } from './tables.js'

export type LeadRow = typeof leads.$inferSelect
export type NewLead = Omit<typeof leads.$inferInsert, 'id' | 'receivedAt' | 'updatedAt'>

/**
 * The new lead, or undefined when its `leadgen_id` is stored already (redelivered, or filed meanwhile). No
 * account argument: a lead no campaign claims has none; a claimed one carries its campaign's in `values`.
 */
export async function insertLead(db: Database, values: NewLead): Promise<LeadRow | undefined> {
  const [row] = await db
    .insert(leads)
    .values(values)
    .onConflictDoNothing({ target: leads.leadgenId })
    .returning()
  return row
}

/** No account: by the provider's `leadgen_id`, unique across accounts, as Meta's webhook and form name it. */
export async function findLeadByLeadgenId(db: Database, leadgenId: string): Promise<LeadRow | undefined> {
  const [row] = await db.select().from(leads).where(eq(leads.leadgenId, leadgenId))
  return row
}

/**
 * Gives an unclaimed lead to the campaign that now claims its page and form; the lead, or undefined when it
 * was claimed already. No account to filter on: an unclaimed lead has none until this gives it one.
 */
export async function claimLead(
  db: Database,
  id: string,
  campaign: { accountId: string; id: string },
): Promise<LeadRow | undefined> {
  const [row] = await db
    .update(leads)
    .set({
      accountId: campaign.accountId,
      campaignId: campaign.id,
      status: 'received',
      updatedAt: new Date(),
    })
    .where(and(eq(leads.id, id), eq(leads.status, 'unclaimed')))
    .returning()
  return row
}

const ofAccount = (accountId: string, id: string) => and(eq(leads.accountId, accountId), eq(leads.id, id))

/** The account's lead a capture job names. */
export async function findLead(db: Database, accountId: string, id: string): Promise<LeadRow | undefined> {
  const [row] = await db.select().from(leads).where(ofAccount(accountId, id))
  return row
}

/** The account's lead, locked until the transaction ends: two captures of it at once file one contact. */
export async function lockLead(db: Database, accountId: string, id: string): Promise<LeadRow | undefined> {
  const [row] = await db.select().from(leads).where(ofAccount(accountId, id)).for('update')
  return row
}

/** What a capture writes into the locked lead: captured with its contact, or failed for want of one. */
export async function recordCapture(
  db: Database,
  accountId: string,
  id: string,
  values: Pick<LeadRow, 'status' | 'reason' | 'fieldData' | 'fields' | 'contactId' | 'capturedAt' | 'adId'>,
): Promise<LeadRow> {
  const [row] = await db
    .update(leads)
    .set({ ...values, updatedAt: new Date() })
    .where(ofAccount(accountId, id))
    .returning()
  return row as LeadRow
}

/**
 * Records why the lead's fetch failed, counting the attempt when `counted`; its attempts so far, or
 * undefined when it was captured meanwhile (a capture is never undone).
 */
export async function recordFetchFailure(
  db: Database,
  accountId: string,
  id: string,
  reason: string,
  counted: boolean,
): Promise<number | undefined> {
  const [row] = await db
    .update(leads)
    .set({
      status: 'failed',
      reason,
      attempts: counted ? sql`${leads.attempts} + 1` : leads.attempts,
      updatedAt: new Date(),
    })
    .where(and(ofAccount(accountId, id), ne(leads.status, 'captured')))
    .returning({ attempts: leads.attempts })
  return row?.attempts
}

/** Makes the account's leads that failed for one of `reasons` `received` again; their ids, to capture. */
export async function receiveFailedLeadsAgain(
  db: Database,
  accountId: string,
  reasons: readonly string[],
): Promise<string[]> {
  const rows = await db
    .update(leads)
    .set({ status: 'received', reason: null, updatedAt: new Date() })
    .where(
      and(eq(leads.accountId, accountId), eq(leads.status, 'failed'), inArray(leads.reason, [...reasons])),
    )
    .returning({ id: leads.id })
  return rows.map((row) => row.id)
}

export interface LeadFilters {
  status?: (typeof LEAD_STATUSES)[number]
  from?: Date
  to?: Date
}

/** A campaign's leads, newest `created_time` first. */
export const leadsList = keysetList('leads', leads.createdTime, leads.id)

/** The campaign's leads, newest `created_time` first. */
export function listCampaignLeads(
  db: Database,
  accountId: string,
  campaignId: string,
  filters: LeadFilters,
  window: ListWindow,
) {
  const conditions: SQL[] = [eq(leads.accountId, accountId), eq(leads.campaignId, campaignId)]
  if (filters.status) conditions.push(eq(leads.status, filters.status))
  if (filters.from) conditions.push(gte(leads.createdTime, filters.from))
  if (filters.to) conditions.push(lte(leads.createdTime, filters.to))
  const where = and(...conditions)
  return selectListPage(
    db,
    db
      .select({ ...getTableColumns(leads), ...placeField(leadsList) })
      .from(leads)
      .$dynamic(),
    { ...leadsList, from: leads, where },
    window,
  )
}
