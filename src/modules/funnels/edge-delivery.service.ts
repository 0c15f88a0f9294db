import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { Invalid, NotFound, Unauthorized } from '../../platform/http/errors.js'
import {
  type EdgeSite,
  findServedStep,
  findStepChecksum,
  hasServableFunnel,
  updateStepHtmlIf,
} from './edge-delivery.repository.js'
import type {
  EdgeStep,
  EdgeStepQuery,
  StepSyncBody,
  StepSyncData,
  SyncReason,
} from './edge-delivery.schemas.js'
import { EDGE_SIGNATURE_WINDOW_SECONDS, edgeSigningText } from './edge-protocol.js'
import {
  FUNNEL_NOT_FOUND,
  INVALID_FUNNEL_ID,
  normalisePath,
  STEP_NOT_FOUND,
} from './funnel-access.service.js'
import type { StepCache } from './step-cache.js'

/** `_sig` for a request to the edge endpoints (the origin's verifier; tests and the bench sign with it). */
export function signEdgeRequest(
  secret: string,
  method: string,
  path: string,
  ts: string | number,
  params: Record<string, unknown>,
): string {
  return createHmac('sha256', secret)
    .update(edgeSigningText(method, path, ts, params))
    .digest('hex')
}

export interface SignedRequest {
  method: string
  /** The request's path, without its query. */
  path: string
  /** The query (GET) or the body (POST) as received, before validation coerces anything. */
  params: unknown
  nowSeconds: number
}

const SIGNATURE = /^[0-9a-f]{64}$/

/** Refuses (401 `Unauthorized`) a request whose `_sig` is missing, wrong, or whose `_ts` is stale. */
export function verifyEdgeSignature(secret: string, request: SignedRequest): void {
  const params = request.params
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    throw new Unauthorized('missing signature')
  }
  const fields = params as Record<string, unknown>
  const { _sig: sig, _ts: ts } = fields
  if (typeof sig !== 'string' || !SIGNATURE.test(sig) || (typeof ts !== 'string' && typeof ts !== 'number')) {
    throw new Unauthorized('missing signature')
  }
  const seconds = Number(ts)
  if (!Number.isInteger(seconds) || Math.abs(request.nowSeconds - seconds) > EDGE_SIGNATURE_WINDOW_SECONDS) {
    throw new Unauthorized('stale signature')
  }
  // `sig` is lowercase hex (SIGNATURE), as `signEdgeRequest` writes it: the two compare as text.
  if (!isSameSecret(sig, signEdgeRequest(secret, request.method, request.path, ts, fields))) {
    throw new Unauthorized('bad signature')
  }
}

/**
 * The path as stored: a URL's pathname arrives percent-encoded (`/caf%C3%A9` for `/café`); one that does
 * not decode is taken as it is, and matches no step.
 */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname)
  } catch {
    return pathname
  }
}

/** Every way to cut `pathname` into a funnel base path and a step path: "/a/b" -> ("/", "/a/b"), ("/a", "/b"), ("/a/b", "/"). */
function splitsOf(pathname: string): [string, string][] {
  const segments = pathname.split('/').filter(Boolean)
  const splits: [string, string][] = []
  for (let at = 0; at <= segments.length; at++) {
    splits.push([`/${segments.slice(0, at).join('/')}`, `/${segments.slice(at).join('/')}`])
  }
  return splits
}

/**
 * The cache key of a GET: the page asked the same way. The path is taken as sent (no normalising on the
 * hit path); spellings of one page are separate entries of the same funnel, forgotten together.
 */
export function edgeStepKey(query: EdgeStepQuery): string {
  return `${query.hostname.toLowerCase()}\n${query.pathname}\n${query.funnel_id ?? ''}\n${query.isPreview === true}`
}

/**
 * The edge's read (the published page at `hostname` + `pathname`, or `pathname` on `funnel_id` whatever the
 * host), as the serialized success envelope, when the instance's step cache holds it (most reads): no
 * promise.
 */
export const cachedEdgeStep = (cache: StepCache<string>, query: EdgeStepQuery): string | undefined =>
  cache.get(edgeStepKey(query))

/**
 * The edge's read from the database, then kept in the step cache (a miss). Inactive and draft funnels are
 * served only in preview.
 */
export async function loadEdgeStep(
  db: Database,
  cache: StepCache<string>,
  query: EdgeStepQuery,
): Promise<string> {
  if (query.funnel_id !== undefined && !isId(query.funnel_id)) throw new Invalid(INVALID_FUNNEL_ID)
  const site: EdgeSite =
    query.funnel_id !== undefined
      ? { funnelId: query.funnel_id }
      : { hostname: query.hostname.toLowerCase().replace(/\.$/, '') }
  const preview = query.isPreview === true
  const generation = cache.generation()
  const found = await findServedStep(db, site, splitsOf(normalisePath(decodedPath(query.pathname))), preview)
  if (!found) {
    throw new NotFound((await hasServableFunnel(db, site, preview)) ? STEP_NOT_FOUND : FUNNEL_NOT_FOUND)
  }
  const step: EdgeStep = {
    step_id: found.stepId,
    funnel_id: found.funnelId,
    html: found.html ?? '',
    checksum: found.checksum,
    seo: found.seo,
    tracking_code: found.trackingCode,
    css: found.css ?? '',
  }
  const body = JSON.stringify({ success: true, message: 'SUCCESS', data: step })
  cache.set(edgeStepKey(query), found.funnelId, body, generation)
  return body
}

export interface SyncOutcome {
  status: 200 | 404 | 409
  reason: SyncReason
  data: StepSyncData
  /** The funnel whose cached pages the update made stale. */
  updatedFunnelId?: string
}

/** The state table's "Step HTML sync": UPDATED, NO_CHANGE, NOT_FOUND or CONFLICT. */
export async function syncStepHtml(db: Database, body: StepSyncBody): Promise<SyncOutcome> {
  const sync = {
    stepId: body.step_id,
    html: body.html,
    newHash: body.newHash,
    currentHash: body.currentHash ?? null,
    skipIfUnchanged: body.skipIfUnchanged === true,
  }
  const outcome = (status: SyncOutcome['status'], reason: SyncReason, checksum: string | null) => ({
    status,
    reason,
    data: { step_id: body.step_id, updated: reason === 'UPDATED', reason, checksum },
  })
  const updatedFunnelId = await updateStepHtmlIf(db, sync)
  if (updatedFunnelId) return { ...outcome(200, 'UPDATED', sync.newHash), updatedFunnelId }
  const stored = await findStepChecksum(db, sync.stepId)
  if (!stored) return outcome(404, 'NOT_FOUND', null)
  if (sync.skipIfUnchanged && stored.checksum === sync.newHash)
    return outcome(200, 'NO_CHANGE', stored.checksum)
  return outcome(409, 'CONFLICT', stored.checksum)
}
