import { setTimeout as sleep } from 'node:timers/promises'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Conflict, NotFound, UpstreamFailed } from '../../platform/http/errors.js'
import type { JobQueue } from '../../platform/jobs/queue.js'
import { ProviderUnreachable } from '../../platform/providers/http-client.js'
import {
  type CampaignRow,
  claimSync,
  findCampaign,
  findCampaignsDueForSync,
  releaseSync,
  setSubscriptionStatus,
} from './campaigns.repository.js'
import { CAMPAIGN_NOT_FOUND } from './campaigns.service.js'
import { withPageToken } from './connection.service.js'
import type { LeadsDeps } from './deps.js'
import {
  GraphError,
  type GraphLead,
  isAppSubscribedToPage,
  listFormLeads,
  subscribeAppToPage,
} from './graph.js'
import { lockLead } from './lead-capture.repository.js'
import {
  type CaptureDeps,
  type CaptureOutcome,
  captureLockedLead,
  NO_CONTACT_DETAILS,
} from './lead-capture.service.js'
import { syncStartsAfter } from './lead-sync.repository.js'
import type { SyncOutcome } from './lead-sync.schemas.js'
import { type LeadToRecord, recordLead } from './lead-webhook.service.js'

/** Reconciles one campaign's leads with Graph (on demand, when created, and periodically). */
export const SYNC_CAMPAIGN_JOB = 'leads.sync-campaign'
/** Every minute: queues the sync of each live campaign not synced for LEADS_SYNC_INTERVAL_MINUTES. */
export const SYNC_DUE_CAMPAIGNS_JOB = 'leads.sync-due-campaigns'

/**
 * The sync reads the form's leads created after the newest lead actually stored minus this overlap, never
 * after "now": a lead Graph lists late, or one stored out of order, is still read again.
 */
export const SYNC_OVERLAP_MS = 60 * 60_000
/** A sync hold older than this belongs to a run that died; another run may take it. */
export const SYNC_HOLD_MS = 15 * 60_000
/**
 * An on-demand sync waits this long for a run already under way (the first sync, queued with a new campaign,
 * or the periodic one) to end, then runs its own; a run still going after it answers 409.
 */
export const SYNC_WAIT_MS = 5_000
const SYNC_WAIT_POLL_MS = 200
/** Campaigns queued per minute by the periodic run, at most. */
const DUE_BATCH = 500

export const SYNC_ALREADY_RUNNING = 'A sync of this campaign is already running'
export const CAMPAIGN_DELETED = 'The campaign is deleted'
/** Graph refused or failed the sync's read; `additional_info` holds Graph's error object. */
export const SYNC_FAILED = 'ERROR_SYNCING_LEADS'

export interface SyncJob {
  account_id: string
  campaign_id: string
}

/**
 * Queues a campaign's sync in the caller's transaction. `slot` names the run (the creation, or the interval
 * the periodic run is for), so a run queued twice for the same slot is queued once.
 */
export function queueCampaignSync(
  queue: JobQueue,
  tx: Database,
  sync: { accountId: string; campaignId: string; slot?: string },
): Promise<unknown> {
  return queue.enqueue<SyncJob>(
    tx,
    SYNC_CAMPAIGN_JOB,
    { account_id: sync.accountId, campaign_id: sync.campaignId },
    { singletonKey: `${sync.campaignId}:${sync.slot ?? 'created'}` },
  )
}

/** The periodic run: the sync of every live campaign due, each once per interval. */
export async function queueDueSyncs(
  deps: { db: Database; queue: JobQueue; intervalMinutes: number },
  now = new Date(),
): Promise<number> {
  const intervalMs = deps.intervalMinutes * 60_000
  const due = await findCampaignsDueForSync(deps.db, new Date(now.getTime() - intervalMs), DUE_BATCH)
  const slot = String(Math.floor(now.getTime() / intervalMs))
  for (const campaign of due)
    await queueCampaignSync(deps.queue, deps.db, {
      accountId: campaign.accountId,
      campaignId: campaign.id,
      slot,
    })
  return due.length
}

/**
 * Subscription health: whether Meta still sends the page's leads to our app (`GET /{page-id}/subscribed_apps`
 * lists it with `leadgen`); a page that lost it is subscribed again. Only for campaigns registered once.
 */
async function checkSubscription(
  deps: LeadsDeps,
  campaign: CampaignRow,
): Promise<CampaignRow['subscriptionStatus']> {
  if (campaign.subscriptionStatus === 'unknown') return 'unknown'
  let status: CampaignRow['subscriptionStatus']
  let error: string | null = null
  try {
    status = await withPageToken(deps, campaign, async (pageToken) => {
      if (await isAppSubscribedToPage(deps.graph, campaign.pageId, pageToken, deps.log)) return 'subscribed'
      await subscribeAppToPage(deps.graph, campaign.pageId, pageToken, deps.log)
      return 'resubscribed'
    })
  } catch (failure) {
    status = 'unsubscribed'
    error = failure instanceof Error ? failure.message : String(failure)
  }
  if (status !== 'subscribed')
    deps.log.warn({ campaign_id: campaign.id, status, error }, 'lead campaign page subscription checked')
  await setSubscriptionStatus(deps.db, campaign.accountId, campaign.id, status, error)
  return status
}

/**
 * A lead read from the campaign's form: filed through the same de-duplication as the webhook's
 * (`source: 'sync'`) and captured from the data read, in one transaction. A lead another campaign holds (of
 * a campaign deleted since, maybe another account's) is left to it.
 */
function recordAndCaptureLead(
  deps: CaptureDeps,
  campaign: Pick<CampaignRow, 'id' | 'accountId' | 'pageId' | 'formId'>,
  graphLead: GraphLead,
): Promise<CaptureOutcome> {
  const createdTime = new Date(graphLead.created_time)
  const lead: LeadToRecord = {
    leadgenId: graphLead.id,
    pageId: campaign.pageId,
    formId: graphLead.form_id ?? campaign.formId,
    adId: graphLead.ad_id,
    adgroupId: graphLead.adgroup_id,
    createdTime: Number.isNaN(createdTime.getTime()) ? new Date() : createdTime,
    source: 'sync',
  }
  return inTransaction(deps.db, async (tx) => {
    const { lead: row } = await recordLead(tx, lead, campaign)
    const locked = await lockLead(tx, campaign.accountId, row.id)
    if (!locked || locked.campaignId !== campaign.id) return 'other_campaign'
    return captureLockedLead(deps, tx, locked, graphLead)
  })
}

/** Files and captures each lead Graph listed, through the webhook's de-duplicated path; what became of them. */
async function captureListed(
  deps: LeadsDeps,
  campaign: CampaignRow,
  listed: GraphLead[],
): Promise<Pick<SyncOutcome, 'new' | 'known' | 'failed'>> {
  const counts = { new: 0, known: 0, failed: 0 }
  for (const graphLead of listed) {
    const outcome = await recordAndCaptureLead(deps, campaign, graphLead)
    if (outcome === 'captured') counts.new++
    else if (outcome === 'no_contact_details') counts.failed++
    else counts.known++
  }
  return counts
}

/** Takes the campaign's sync hold, waiting up to `waitMs` for a run holding it to let go. */
async function holdSync(
  db: Database,
  accountId: string,
  campaignId: string,
  waitMs: number,
): Promise<boolean> {
  const giveUpAt = Date.now() + waitMs
  for (;;) {
    if (await claimSync(db, accountId, campaignId, new Date(Date.now() - SYNC_HOLD_MS))) return true
    if (Date.now() >= giveUpAt) return false
    await sleep(SYNC_WAIT_POLL_MS)
  }
}

/**
 * One reconciliation run of a campaign, holding its sync (one at a time across instances): the form's leads
 * Graph lists since the newest stored lead minus SYNC_OVERLAP_MS, every cursor page, captured when the
 * webhook missed them; then the page subscription's health.
 */
export async function syncCampaign(
  deps: LeadsDeps,
  accountId: string,
  campaignId: string,
  waitMs = 0,
): Promise<SyncOutcome> {
  const campaign = await findCampaign(deps.db, accountId, campaignId)
  if (!campaign) throw new NotFound(CAMPAIGN_NOT_FOUND)
  if (campaign.isDeleted) throw new Conflict(CAMPAIGN_DELETED)
  if (!(await holdSync(deps.db, accountId, campaignId, waitMs))) throw new Conflict(SYNC_ALREADY_RUNNING)
  try {
    // A lead without contact details stays so however often it is read again.
    const startsAfter = await syncStartsAfter(deps.db, accountId, campaignId, NO_CONTACT_DETAILS)
    const after = startsAfter ? new Date(startsAfter.getTime() - SYNC_OVERLAP_MS) : undefined
    const listed = await withPageToken(deps, campaign, (pageToken) =>
      listFormLeads(deps.graph, campaign.formId, pageToken, after, deps.log),
    )
    const counts = await captureListed(deps, campaign, listed)
    const outcome = {
      campaign_id: campaignId,
      read: listed.length,
      ...counts,
      subscription_status: await checkSubscription(deps, campaign),
    }
    deps.log.info(
      { ...outcome, account_id: accountId, after: after?.toISOString() ?? null },
      'lead campaign synced',
    )
    return outcome
  } finally {
    await releaseSync(deps.db, accountId, campaignId)
  }
}

/**
 * `POST /socialnet/campaigns/:id/sync`: a run now, after the one under way if any (SYNC_WAIT_MS). Graph's
 * refusal answers 502 with Graph's error object.
 */
export async function syncCampaignNow(
  deps: LeadsDeps,
  accountId: string,
  campaignId: string,
): Promise<SyncOutcome> {
  try {
    return await syncCampaign(deps, accountId, campaignId, SYNC_WAIT_MS)
  } catch (error) {
    if (error instanceof GraphError) throw new UpstreamFailed(SYNC_FAILED, error.providerError)
    if (error instanceof ProviderUnreachable)
      throw new UpstreamFailed(SYNC_FAILED, { message: error.message })
    throw error
  }
}

/**
 * The sync job (periodic, or queued with a new campaign). A run another instance holds, or a campaign deleted
 * meanwhile, is skipped; a failure is logged and left to the next interval rather than retried at once.
 */
export async function runQueuedSync(deps: LeadsDeps, accountId: string, campaignId: string): Promise<void> {
  try {
    await syncCampaign(deps, accountId, campaignId)
  } catch (error) {
    if (error instanceof Conflict || error instanceof NotFound) {
      deps.log.info({ campaign_id: campaignId, reason: error.message }, 'lead campaign sync skipped')
      return
    }
    deps.log.warn({ campaign_id: campaignId, account_id: accountId, err: error }, 'lead campaign sync failed')
  }
}
