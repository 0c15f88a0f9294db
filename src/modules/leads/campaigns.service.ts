import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import { requireAccount } from '../accounts/accounts.service.js'
import {
  type CampaignListRow,
  findCampaignView,
  insertCampaign,
  listCampaigns,
  markCampaignDeleted,
} from './campaigns.repository.js'
import type { Campaign, CampaignsQuery, CreateCampaignBody } from './campaigns.schemas.js'

export const CAMPAIGN_NOT_FOUND = 'Campaign not found'
/** A page and form belong to one live campaign across all accounts, so each lead maps to one account. */
export const FORM_ALREADY_CLAIMED = 'A live campaign already claims this page and form'

export const campaignView = (row: CampaignListRow): Campaign => ({
  _id: row.id,
  account_id: row.accountId,
  integration: 'socialnet_ads',
  page_id: row.pageId,
  form_id: row.formId,
  is_deleted: row.isDeleted,
  created_at: row.createdAt.toISOString(),
  subscription_status: row.subscriptionStatus,
  subscription_error: row.subscriptionError,
  subscription_checked_at: row.subscriptionCheckedAt?.toISOString() ?? null,
  last_lead_at: row.lastLeadAt?.toISOString() ?? null,
  synced_at: row.syncedAt?.toISOString() ?? null,
})

/**
 * `POST /socialnet/campaigns`: the account's claim on a page's lead form. Its first sync is queued with it,
 * so leads that arrived before it (kept `unclaimed`) and those only Graph holds are picked up.
 */
export async function createCampaign(
  deps: {
    db: Database
    enqueueSync: (tx: Database, accountId: string, campaignId: string) => Promise<unknown>
  },
  accountId: string,
  body: CreateCampaignBody,
): Promise<Campaign> {
  await requireAccount(deps.db, accountId)
  return inTransaction(deps.db, async (tx) => {
    const row = await insertCampaign(tx, accountId, { pageId: body.page_id, formId: body.form_id })
    if (!row) throw new Conflict(FORM_ALREADY_CLAIMED)
    await deps.enqueueSync(tx, accountId, row.id)
    return campaignView({ ...row, lastLeadAt: null })
  })
}

export async function getCampaign(db: Database, accountId: string, id: string): Promise<Campaign> {
  const row = await findCampaignView(db, accountId, id)
  if (!row) throw new NotFound(CAMPAIGN_NOT_FOUND)
  return campaignView(row)
}

export function listCampaignsPage(
  db: Database,
  accountId: string,
  query: CampaignsQuery,
): Promise<{ data: Campaign[]; pagination: Pagination }> {
  return paginate(
    query,
    async (window) => {
      const { rows, total } = await listCampaigns(
        db,
        accountId,
        { includeDeleted: query.include_deleted },
        window,
      )
      return { rows: rows.map((row) => ({ ...row.campaign, lastLeadAt: row.lastLeadAt })), total }
    },
    campaignView,
  )
}

/** `DELETE /socialnet/campaigns/:id`: marks it `is_deleted` (its leads stay); repeating it changes nothing. */
export async function deleteCampaign(db: Database, accountId: string, id: string): Promise<Campaign> {
  const row = await markCampaignDeleted(db, accountId, id)
  if (!row) throw new NotFound(CAMPAIGN_NOT_FOUND)
  return getCampaign(db, accountId, id)
}
