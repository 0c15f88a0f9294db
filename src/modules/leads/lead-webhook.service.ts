import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import type { Database } from '../../platform/db/connection.js'
import { insertOrReadBack } from '../../platform/db/insert-or-find.js'
import { replaceUnstorable } from '../../platform/db/storable.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { Forbidden, Invalid, Unavailable } from '../../platform/http/errors.js'
import { isJsonObject, type JsonFields, textOf } from '../../platform/http/json-fields.js'
import type { Logger } from '../../platform/log/logger.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { type CampaignRow, findLiveCampaignOfForm } from './campaigns.repository.js'
import { claimLead, findLeadByLeadgenId, insertLead, type LeadRow } from './lead-capture.repository.js'
import type { EnqueueCapture } from './lead-capture.service.js'
import {
  findUnprocessedBefore,
  lockLeadWebhookEvent,
  markLeadWebhookEventProcessed,
} from './lead-webhook.repository.js'
import type { VerificationQuery } from './lead-webhook.schemas.js'
import type { LEAD_SOURCES } from './tables.js'

/** The spec's "Verification token or signature mismatch": 403. */
export const VERIFY_TOKEN_MISMATCH = 'Verification token mismatch'
export const SIGNATURE_MISMATCH = 'Signature mismatch'
/** The one kind of change this webhook files. */
export const LEADGEN = 'leadgen'

/** How long a stored event waits for its job before it is queued again, and how many at a time. */
const REQUEUE_AFTER_MS = 60_000
const REQUEUE_BATCH = 1000

/**
 * `GET /webhooks/socialnet/leads`: Meta's check of the callback URL. The challenge to echo when the mode is
 * `subscribe` and the token is SOCIALNET_VERIFY_TOKEN; 403 otherwise, and always when none is configured.
 */
export function verifySubscription(verifyToken: string | undefined, query: VerificationQuery): string {
  if (
    !verifyToken ||
    query['hub.mode'] !== 'subscribe' ||
    !isSameSecret(query['hub.verify_token'], verifyToken)
  )
    throw new Forbidden(VERIFY_TOKEN_MISMATCH)
  const challenge = query['hub.challenge']
  if (challenge === undefined) throw new Invalid('hub.challenge is required')
  return challenge
}

/** The signature headers of a post, as Meta sends them (a header sent twice counts as none). */
export function signaturesOf(headers: Record<string, string | string[] | undefined>) {
  const one = (value: string | string[] | undefined) => (typeof value === 'string' ? value : undefined)
  return { sha1: one(headers['x-hub-signature']), sha256: one(headers['x-hub-signature-256']) }
}

/** Whether `header` is `<algorithm>=<hex HMAC of the raw body with the app secret>`, compared in constant time. */
function signatureMatches(
  header: string,
  algorithm: 'sha1' | 'sha256',
  secret: string,
  rawBody: Buffer,
): boolean {
  const expected = `${algorithm}=${createHmac(algorithm, secret).update(rawBody).digest('hex')}`
  return isSameSecret(header.trim().toLowerCase(), expected)
}

/**
 * What Meta posted, from the exact bytes it sent, verified with SOCIALNET_APP_SECRET before anything is read:
 * the spec's `X-Hub-Signature` (SHA-1) and the `X-Hub-Signature-256` Meta signs with today, each checked when
 * sent and at least one required; 403 without, with a wrong one, or with no secret set.
 */
export function readLeadPost(
  appSecret: string | undefined,
  signatures: { sha1: string | undefined; sha256: string | undefined },
  rawBody: Buffer,
): JsonFields {
  const { sha1, sha256 } = signatures
  if (
    !appSecret ||
    (sha1 === undefined && sha256 === undefined) ||
    (sha1 !== undefined && !signatureMatches(sha1, 'sha1', appSecret, rawBody)) ||
    (sha256 !== undefined && !signatureMatches(sha256, 'sha256', appSecret, rawBody))
  )
    throw new Forbidden(SIGNATURE_MISMATCH)
  let body: unknown
  try {
    body = JSON.parse(rawBody.toString('utf8'))
  } catch {
    body = undefined
  }
  if (!isJsonObject(body)) throw new Invalid('body must be a JSON lead event')
  // PostgreSQL's jsonb cannot hold NUL: replaced, so that a signed event is never refused for it.
  return replaceUnstorable(body) as JsonFields
}

/**
 * Stores the verified event, the only statement before Meta is answered, then queues its filing (batched,
 * on the queue's connections). An event whose job could not be queued is queued again by the sweep
 * (requeueUnprocessedEvents). When it cannot be stored Meta is answered 503 and delivers it again.
 */
export async function receiveLeadEvent(
  deps: { storeEvent: (payload: unknown) => Promise<string>; log: Logger },
  payload: JsonFields,
  queueFiling: (eventId: string) => void,
): Promise<void> {
  let id: string
  try {
    id = await deps.storeEvent(payload)
  } catch (error) {
    deps.log.error({ err: error }, 'lead event could not be stored; Meta will deliver it again')
    throw new Unavailable('The event could not be stored; please retry')
  }
  queueFiling(id)
}

/** Queues again the events still unprocessed a while after they arrived (their job was never queued). */
export async function requeueUnprocessedEvents(
  deps: { db: Database; log: Logger },
  queueFiling: (eventId: string) => void,
  now = new Date(),
): Promise<void> {
  const ids = await findUnprocessedBefore(deps.db, new Date(now.getTime() - REQUEUE_AFTER_MS), REQUEUE_BATCH)
  for (const id of ids) queueFiling(id)
  if (ids.length > 0) deps.log.warn({ events: ids.length }, 'lead events queued again')
}

export type LeadSource = (typeof LEAD_SOURCES)[number]

/** A lead as the webhook announced it, or as the sync read it from its form. */
export interface LeadToRecord {
  leadgenId: string
  pageId: string
  formId: string
  adId?: string
  adgroupId?: string
  createdTime: Date
  source: LeadSource
}

/**
 * Files a lead once per `leadgen_id` (redelivered, delivered twice at once, or read again by the sync): new,
 * it is `received` by `campaign` or, with none, `unclaimed`; known and unclaimed, `campaign` claims it.
 * `filed` says whether it now waits for its capture because of this call.
 */
export async function recordLead(
  tx: Database,
  lead: LeadToRecord,
  campaign: Pick<CampaignRow, 'id' | 'accountId'> | undefined,
): Promise<{ lead: LeadRow; created: boolean; filed: boolean }> {
  const { row, created } = await insertOrReadBack(
    async () => {
      const inserted = await insertLead(tx, {
        ...lead,
        accountId: campaign?.accountId ?? null,
        campaignId: campaign?.id ?? null,
        status: campaign ? 'received' : 'unclaimed',
      })
      return inserted ? [inserted] : []
    },
    async () => {
      const found = await findLeadByLeadgenId(tx, lead.leadgenId)
      return found ? [found] : []
    },
    'leads',
  )
  if (created) return { lead: row, created, filed: row.status === 'received' }
  const claimed = campaign && row.status === 'unclaimed' ? await claimLead(tx, row.id, campaign) : undefined
  return claimed ? { lead: claimed, created, filed: true } : { lead: row, created, filed: false }
}

/**
 * The live campaign claiming the page and form, if its account still takes leads: a removed account's
 * campaign claims nothing from its DELETE on (its rows go later), so its leads are kept unclaimed.
 */
async function claimingCampaign(tx: Database, pageId: string, formId: string) {
  const campaign = await findLiveCampaignOfForm(tx, pageId, formId)
  return campaign && (await isAccountServing(tx, campaign.accountId, 'visit')) ? campaign : undefined
}

/** A Graph id as a webhook carries it: a string, at times a JSON number. */
function idOf(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : undefined
  const text = textOf(value)
  return text && text.length <= 128 ? text : undefined
}

/** A change's `created_time` (Unix seconds, number or digits); now when it has none in years 1970-9999. */
function createdTimeOf(value: unknown): Date {
  const seconds = typeof value === 'string' && /^\d+$/.test(value.trim()) ? Number(value) : value
  const at = typeof seconds === 'number' && seconds > 0 ? new Date(seconds * 1000) : undefined
  return at && at.getUTCFullYear() <= 9999 ? at : new Date()
}

/** The `leadgen` changes of a lead event, as leads to file; anything else is ignored (logged at debug). */
export function leadgenChanges(payload: unknown, log: Logger): LeadToRecord[] {
  if (!isJsonObject(payload) || payload.object !== 'page' || !Array.isArray(payload.entry)) {
    log.debug(
      { object: isJsonObject(payload) ? payload.object : undefined },
      'lead event ignored: not a page event',
    )
    return []
  }
  const found: LeadToRecord[] = []
  for (const entry of payload.entry.filter(isJsonObject)) {
    for (const change of Array.isArray(entry.changes) ? entry.changes : []) {
      const value =
        isJsonObject(change) && change.field === LEADGEN && isJsonObject(change.value) ? change.value : {}
      const leadgenId = idOf(value.leadgen_id)
      const pageId = idOf(value.page_id) ?? idOf(entry.id)
      const formId = idOf(value.form_id)
      if (!leadgenId || !pageId || !formId) {
        log.debug({ field: isJsonObject(change) ? change.field : undefined }, 'lead event change ignored')
        continue
      }
      found.push({
        leadgenId,
        pageId,
        formId,
        adId: idOf(value.ad_id),
        adgroupId: idOf(value.adgroup_id),
        createdTime: createdTimeOf(value.created_time),
        source: 'webhook',
      })
    }
  }
  return found
}

/**
 * The event's job: each `leadgen` change filed once per `leadgen_id` (for the live campaign claiming its page
 * and form, else `unclaimed`) and each newly filed lead's capture queued, all in one transaction with the
 * event locked and marked processed.
 */
export async function fileLeadEvent(
  deps: { db: Database; log: Logger; enqueueCapture: EnqueueCapture },
  eventId: string,
): Promise<void> {
  await inTransaction(deps.db, async (tx) => {
    const event = await lockLeadWebhookEvent(tx, eventId)
    if (!event || event.processedAt) return
    // In one order for every event, so that two events naming the same leads wait for each other, never deadlock.
    const changes = leadgenChanges(event.payload, deps.log).sort((a, b) =>
      a.leadgenId < b.leadgenId ? -1 : a.leadgenId > b.leadgenId ? 1 : 0,
    )
    for (const change of changes) {
      const campaign = await claimingCampaign(tx, change.pageId, change.formId)
      const { lead, created, filed } = await recordLead(tx, change, campaign)
      if (filed && campaign) await deps.enqueueCapture(tx, campaign.accountId, lead.id)
      if (created && !campaign)
        deps.log.info(
          { lead_id: lead.id, page_id: change.pageId, form_id: change.formId },
          'lead kept unclaimed: no live campaign claims its page and form',
        )
    }
    await markLeadWebhookEventProcessed(tx, event.id)
  })
}
