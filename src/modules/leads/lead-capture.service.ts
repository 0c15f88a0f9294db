import type { Database } from '../../platform/db/connection.js'
import { replaceUnstorable } from '../../platform/db/storable.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { CursorPagination, Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import { EMAIL_MAX_LENGTH } from '../../platform/http/schemas.js'
import { ProviderUnavailable } from '../../platform/providers/provider-circuits.js'
import { saveContactFromSource } from '../accounts/contacts.service.js'
import { findCampaign } from './campaigns.repository.js'
import { CAMPAIGN_NOT_FOUND } from './campaigns.service.js'
import { SocialTokenMissing, withPageToken } from './connection.service.js'
import type { LeadsDeps } from './deps.js'
import { fetchLead, GraphError, type GraphLead } from './graph.js'
import {
  findLead,
  type LeadRow,
  leadsList,
  listCampaignLeads,
  lockLead,
  receiveFailedLeadsAgain,
  recordCapture,
  recordFetchFailure,
} from './lead-capture.repository.js'
import type { Lead, LeadsQuery } from './lead-capture.schemas.js'
import { LEAD_CREATED, notifyAccount } from './notifications.service.js'

/** The spec's standard lead field names: read from `field_data` into a lead's `fields`. */
export const STANDARD_LEAD_FIELDS: ReadonlySet<string> = new Set([
  'full_name',
  'first_name',
  'last_name',
  'email',
  'phone_number',
  'zip_code',
  'city',
  'state',
  'country',
  'date_of_birth',
  'gender',
  'post_code',
  'street_address',
  'work_email',
  'work_phone_number',
  'company_name',
  'job_title',
])

/** Why a lead is `failed`; `fetch_failed: <Graph's message>` for Graph's other errors. */
export const TOKEN_INVALID = 'token_invalid'
export const TOKEN_MISSING = 'token_missing'
export const THROTTLED = 'throttled'
export const FETCH_FAILED = 'fetch_failed'
export const NO_CONTACT_DETAILS = 'no_contact_details'

/**
 * Fetches of one lead, throttled or failed, before it is left `failed` for the sync to retry: their delays
 * (captureBackoffMs) add up to 3 hours, so that a lead outlives Graph failing for an hour and more.
 */
export const MAX_CAPTURE_ATTEMPTS = 10
const FIRST_BACKOFF_MS = 30_000
const MAX_BACKOFF_MS = 3_600_000

/** Queues the capture of the account's lead in `tx`; `retry` for a later attempt after a failed fetch. */
export type EnqueueCapture = (
  tx: Database,
  accountId: string,
  leadId: string,
  retry?: { startAfter: Date; attempt: number },
) => Promise<unknown>
export type CaptureDeps = Pick<LeadsDeps, 'db' | 'log' | 'events' | 'changes'>
/** What became of a lead given its data. */
export type CaptureOutcome =
  | 'captured'
  | 'already_captured'
  | 'no_contact_details'
  | 'unclaimed'
  | 'other_campaign'

export const leadView = (row: LeadRow): Lead => ({
  _id: row.id,
  leadgen_id: row.leadgenId,
  campaign_id: row.campaignId,
  page_id: row.pageId,
  form_id: row.formId,
  ad_id: row.adId,
  created_time: row.createdTime.toISOString(),
  field_data: row.fieldData as Lead['field_data'],
  fields: row.fields,
  contact_id: row.contactId,
  status: row.status,
  reason: row.reason,
  source: row.source,
  received_at: row.receivedAt.toISOString(),
  captured_at: row.capturedAt?.toISOString() ?? null,
})

/** The standard fields of `field_data`, the first value of each; names compared without case. */
export function standardFields(fieldData: GraphLead['field_data']): Record<string, string> {
  const fields: Record<string, string> = {}
  for (const field of fieldData) {
    const name = typeof field?.name === 'string' ? field.name.trim().toLowerCase() : ''
    const value = Array.isArray(field?.values) ? field.values[0] : undefined
    if (STANDARD_LEAD_FIELDS.has(name) && !(name in fields) && typeof value === 'string' && value.trim())
      fields[name] = value.trim()
  }
  return fields
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/
/** An email a contact can be found by: the shape of one, no longer than SMTP carries. */
const emailOf = (value: string | undefined) =>
  value && value.length <= EMAIL_MAX_LENGTH && EMAIL.test(value) ? value : undefined

/** Who the lead is, for the contact: email, else work email; phone, else work phone; or none. */
function contactOf(fields: Record<string, string>) {
  const name =
    fields.full_name ?? ([fields.first_name, fields.last_name].filter(Boolean).join(' ') || undefined)
  const email = emailOf(fields.email) ?? emailOf(fields.work_email)
  const phone = fields.phone_number ?? fields.work_phone_number
  if (email) return { email, name, phone }
  return phone ? { phone, name } : undefined
}

/**
 * Captures the lead, locked by the caller's transaction (lockLead), from its data: the contact saved, the
 * lead recorded, the account told.
 */
export async function captureLockedLead(
  deps: CaptureDeps,
  tx: Database,
  lead: LeadRow,
  graphLead: GraphLead,
): Promise<CaptureOutcome> {
  if (lead.status === 'captured') return 'already_captured'
  if (!lead.accountId) return 'unclaimed'
  const fieldData = replaceUnstorable(graphLead.field_data) as GraphLead['field_data']
  const fields = standardFields(fieldData)
  const person = contactOf(fields)
  const kept = { fieldData, fields, adId: lead.adId ?? graphLead.ad_id ?? null }
  const logged = { lead_id: lead.id, account_id: lead.accountId }
  if (!person) {
    await recordCapture(tx, lead.accountId, lead.id, {
      ...kept,
      status: 'failed',
      reason: NO_CONTACT_DETAILS,
      contactId: null,
      capturedAt: null,
    })
    deps.log.warn(
      { ...logged, reason: NO_CONTACT_DETAILS },
      'lead not captured: it has neither email nor phone',
    )
    return 'no_contact_details'
  }
  const contact = await saveContactFromSource(tx, deps.changes, lead.accountId, person)
  const row = await recordCapture(tx, lead.accountId, lead.id, {
    ...kept,
    status: 'captured',
    reason: null,
    contactId: contact._id,
    capturedAt: new Date(),
  })
  await notifyAccount(deps, tx, lead.accountId, LEAD_CREATED, leadView(row))
  deps.log.info({ ...logged, contact_id: contact._id, source: lead.source }, 'lead captured')
  return 'captured'
}

/**
 * The leads of the account that failed for want of a valid token (TOKEN_INVALID, TOKEN_MISSING: failures no
 * retry mends), queued again now that a new one was stored.
 */
export async function queueLeadsWaitingForToken(
  tx: Database,
  accountId: string,
  enqueueCapture: EnqueueCapture,
): Promise<number> {
  const ids = await receiveFailedLeadsAgain(tx, accountId, [TOKEN_INVALID, TOKEN_MISSING])
  for (const id of ids) await enqueueCapture(tx, accountId, id)
  return ids.length
}

export type CaptureJobDeps = LeadsDeps & { enqueueCapture: EnqueueCapture }

/**
 * The capture job: the account's lead fetched by id with its page's token (outside any transaction), then
 * captured in one transaction with the lead locked (a lead captured meanwhile is left as it is). A fetch
 * that fails is recorded on the lead (`failed`, with its reason) and, when a later attempt may succeed,
 * queued again with backoff; nothing is dropped.
 */
export async function captureLead(deps: CaptureJobDeps, accountId: string, leadId: string): Promise<void> {
  const lead = await findLead(deps.db, accountId, leadId)
  if (!lead?.campaignId || lead.status === 'captured') return
  const campaign = await findCampaign(deps.db, accountId, lead.campaignId)
  if (!campaign) return
  let graphLead: GraphLead
  try {
    // A kept page token Graph refuses is read again once; refused again, the account's token is invalid.
    graphLead = await withPageToken(deps, campaign, (pageToken) =>
      fetchLead(deps.graph, lead.leadgenId, pageToken, deps.log),
    )
  } catch (error) {
    // Refused before reaching Graph (its circuit is open): no attempt was made; the queue runs the job again
    // when Graph may be called.
    if (error instanceof ProviderUnavailable) throw error
    await recordFailedFetch(deps, accountId, lead.id, failureOf(error))
    return
  }
  await inTransaction(deps.db, async (tx) => {
    const locked = await lockLead(tx, accountId, lead.id)
    if (locked) await captureLockedLead(deps, tx, locked, graphLead)
  })
}

interface FetchFailure {
  reason: string
  /** Whether a later attempt may succeed (counted against MAX_CAPTURE_ATTEMPTS). */
  retry: boolean
  /** Graph's `estimated_time_to_regain_access`, when it sent one. */
  retryAfterMs?: number
}

const briefly = (message: string) => message.replace(/\s+/g, ' ').slice(0, 200)

function failureOf(error: unknown): FetchFailure {
  if (error instanceof SocialTokenMissing) return { reason: TOKEN_MISSING, retry: false }
  if (error instanceof GraphError) {
    if (error.tokenInvalid) return { reason: TOKEN_INVALID, retry: false }
    if (error.throttled) return { reason: THROTTLED, retry: true, retryAfterMs: error.retryAfterMs }
    return { reason: `${FETCH_FAILED}: ${briefly(error.graphMessage)}`, retry: true }
  }
  return {
    reason: `${FETCH_FAILED}: ${briefly(error instanceof Error ? error.message : String(error))}`,
    retry: true,
  }
}

/** 30 s after the first failure, doubling, at most an hour. */
export const captureBackoffMs = (attempts: number) =>
  Math.min(FIRST_BACKOFF_MS * 2 ** Math.max(0, attempts - 1), MAX_BACKOFF_MS)

async function recordFailedFetch(
  deps: CaptureJobDeps,
  accountId: string,
  leadId: string,
  failure: FetchFailure,
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const attempts = await recordFetchFailure(tx, accountId, leadId, failure.reason, failure.retry)
    if (attempts === undefined) return
    const retryInMs =
      failure.retry && attempts < MAX_CAPTURE_ATTEMPTS
        ? (failure.retryAfterMs ?? captureBackoffMs(attempts))
        : undefined
    if (retryInMs !== undefined)
      await deps.enqueueCapture(tx, accountId, leadId, {
        startAfter: new Date(Date.now() + retryInMs),
        attempt: attempts,
      })
    deps.log.warn(
      {
        lead_id: leadId,
        account_id: accountId,
        reason: failure.reason,
        attempts,
        retry_in_ms: retryInMs ?? null,
      },
      'lead fetch failed',
    )
  })
}

/** `GET /socialnet/campaigns/:id/leads`: the campaign's leads (a deleted campaign's too), newest first. */
export async function listLeads(
  db: Database,
  accountId: string,
  campaignId: string,
  query: LeadsQuery,
): Promise<{ data: Lead[]; pagination: Pagination | CursorPagination }> {
  const from = query.from ? new Date(query.from) : undefined
  const to = query.to ? new Date(query.to) : undefined
  if (from && to && from > to) throw new Invalid('from must not be after to')
  if (!(await findCampaign(db, accountId, campaignId))) throw new NotFound(CAMPAIGN_NOT_FOUND)
  return paginateList(
    leadsList,
    query,
    (window) => listCampaignLeads(db, accountId, campaignId, { status: query.status, from, to }, window),
    leadView,
  )
}
