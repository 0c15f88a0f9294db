import { isJsonObject, textOf } from '../../platform/http/json-fields.js'
import type { Logger } from '../../platform/log/logger.js'
import { type ProviderResponse, providerRequest } from '../../platform/providers/http-client.js'

/** GRAPH_API_URL, GRAPH_API_VERSION and the Meta app (config.leads). */
export interface GraphSettings {
  graphApiUrl: string
  graphApiVersion: string
  appId: string | undefined
  appSecret: string | undefined
}

/** The spec's lead data resource, as Graph answers `GET /{leadgen-id}` and lists a form's leads. */
export interface GraphLead {
  id: string
  created_time: string
  field_data: { name: string; values: string[] }[]
  ad_id?: string
  adgroup_id?: string
  form_id?: string
}

/** A lead form as Graph lists it under `/{page-id}/leadgen_forms`. */
export interface GraphLeadForm {
  id: string
  name?: string
  status?: string
  locale?: string
  questions?: { key?: string; label?: string; type?: string }[]
  privacy_policy?: { url?: string; link_text?: string }
  created_time?: string
}

/** Graph's error codes for an invalid or expired access token. */
export const INVALID_TOKEN_CODE = 190
/**
 * Graph's throttling codes (application, user, page, custom rate and leadgen limits). Graph answers them
 * with HTTP 400, not 429, so the shared client does not retry them; the caller backs off.
 */
export const THROTTLING_CODES: ReadonlySet<number> = new Set([4, 17, 32, 613, 80005])

/** Graph's refusal, with its `error` object: `{ message, type, code }` is what the spec passes on. */
export class GraphError extends Error {
  constructor(
    readonly status: number,
    readonly graphMessage: string,
    readonly type: string | undefined,
    readonly code: number | undefined,
    /** From `estimated_time_to_regain_access` when Graph sends it with a throttling error. */
    readonly retryAfterMs: number | undefined,
  ) {
    super(`Graph answered ${status}${code === undefined ? '' : ` code ${code}`}: ${graphMessage}`)
    this.name = 'GraphError'
  }

  /** Code 190: the token is invalid or expired; no retry helps until a new one is stored. */
  get tokenInvalid(): boolean {
    return this.code === INVALID_TOKEN_CODE
  }

  get throttled(): boolean {
    return this.code !== undefined && THROTTLING_CODES.has(this.code)
  }

  /** Worth trying again later: throttled, or Graph itself failed. */
  get transient(): boolean {
    return this.throttled || this.status >= 500
  }

  /** The provider error object the spec shows: `{ message, type, code }`. */
  get providerError(): { message: string; type?: string; code?: number } {
    return { message: this.graphMessage, type: this.type, code: this.code }
  }
}

/** The Meta app is not configured (SOCIALNET_APP_ID / SOCIALNET_APP_SECRET unset). */
export class GraphAppNotConfigured extends Error {
  constructor() {
    super('SOCIALNET_APP_ID and SOCIALNET_APP_SECRET are not set')
    this.name = 'GraphAppNotConfigured'
  }
}

/**
 * The longest `estimated_time_to_regain_access` (minutes) in Graph's usage headers, in milliseconds. The
 * business use case header is an object of arrays of usage entries, keyed by business id.
 */
export function regainAccessMs(headers: Record<string, string>): number | undefined {
  const raw = headers['x-business-use-case-usage']
  if (!raw) return undefined
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return undefined
  }
  if (!isJsonObject(parsed)) return undefined
  const minutes = Object.values(parsed)
    .flatMap((entries) => (Array.isArray(entries) ? entries : []))
    .map((entry) => (isJsonObject(entry) ? Number(entry.estimated_time_to_regain_access) : Number.NaN))
    .filter((value) => Number.isFinite(value) && value >= 0)
  return minutes.length > 0 ? Math.max(...minutes) * 60_000 : undefined
}

function graphError(response: ProviderResponse): GraphError {
  const error = isJsonObject(response.body) && isJsonObject(response.body.error) ? response.body.error : {}
  const code = typeof error.code === 'number' ? error.code : undefined
  return new GraphError(
    response.status,
    textOf(error.message) ?? `HTTP ${response.status}`,
    textOf(error.type),
    code,
    regainAccessMs(response.headers),
  )
}

type Params = Record<string, string | number | boolean | undefined>

/** One Graph call: parameters in the query for reads, as a form body for writes (tokens stay out of URLs). */
async function graphCall(
  settings: GraphSettings,
  log: Logger,
  call: { method?: 'GET' | 'POST' | 'DELETE'; path?: string; url?: string; params?: Params },
): Promise<Record<string, unknown>> {
  const method = call.method ?? 'GET'
  const url = call.url ?? `${settings.graphApiUrl}/${settings.graphApiVersion}/${call.path}`
  const form =
    method !== 'GET'
      ? new URLSearchParams(
          Object.entries(call.params ?? {}).flatMap(([name, value]): [string, string][] =>
            value === undefined ? [] : [[name, String(value)]],
          ),
        ).toString()
      : undefined
  const response = await providerRequest(
    {
      provider: 'graph',
      method,
      url,
      query: method === 'GET' ? call.params : undefined,
      headers: form === undefined ? undefined : { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
      // Graph's writes are not idempotent everywhere; its reads are retried on 5xx by the shared client.
      retries: method === 'GET' ? 2 : 0,
    },
    log,
  )
  if (response.status >= 300 || !isJsonObject(response.body)) throw graphError(response)
  return response.body
}

function appCredentials(settings: GraphSettings): { client_id: string; client_secret: string } {
  if (!settings.appId || !settings.appSecret) throw new GraphAppNotConfigured()
  return { client_id: settings.appId, client_secret: settings.appSecret }
}

function accessTokenOf(body: Record<string, unknown>): string {
  const token = textOf(body.access_token)
  if (!token) throw new GraphError(502, 'Graph answered no access_token', undefined, undefined, undefined)
  return token
}

/** The app's own token (`grant_type=client_credentials`), for `/{app-id}/subscriptions`. */
export async function getAppToken(settings: GraphSettings, log: Logger): Promise<string> {
  const body = await graphCall(settings, log, {
    path: 'oauth/access_token',
    params: { ...appCredentials(settings), grant_type: 'client_credentials' },
  })
  return accessTokenOf(body)
}

/** A long-lived user token for `userToken` (`grant_type=fb_exchange_token`). */
export async function exchangeForLongLivedToken(
  settings: GraphSettings,
  userToken: string,
  log: Logger,
): Promise<{ access_token: string; token_type: 'bearer'; expires_in: number }> {
  const body = await graphCall(settings, log, {
    path: 'oauth/access_token',
    params: { ...appCredentials(settings), grant_type: 'fb_exchange_token', fb_exchange_token: userToken },
  })
  const expiresIn = Number(body.expires_in)
  return {
    access_token: accessTokenOf(body),
    token_type: 'bearer',
    expires_in: Number.isInteger(expiresIn) && expiresIn > 0 ? expiresIn : 0,
  }
}

/** The page's access token, read with a user token of someone who manages the page. */
export async function getPageToken(
  settings: GraphSettings,
  pageId: string,
  userToken: string,
  log: Logger,
): Promise<string> {
  const body = await graphCall(settings, log, {
    path: encodeURIComponent(pageId),
    params: { fields: 'access_token', access_token: userToken },
  })
  return accessTokenOf(body)
}

/** Subscribes our app to the page's `leadgen` field (`POST /{page-id}/subscribed_apps`). */
export async function subscribeAppToPage(
  settings: GraphSettings,
  pageId: string,
  pageToken: string,
  log: Logger,
): Promise<void> {
  await graphCall(settings, log, {
    method: 'POST',
    path: `${encodeURIComponent(pageId)}/subscribed_apps`,
    params: { subscribed_fields: 'leadgen', access_token: pageToken },
  })
}

/**
 * Unsubscribes our app from the page (`DELETE /{page-id}/subscribed_apps`, with the page's token). A page
 * Graph no longer has (404, or code 100: the object does not exist) counts as unsubscribed: false.
 */
export async function unsubscribeAppFromPage(
  settings: GraphSettings,
  pageId: string,
  pageToken: string,
  log: Logger,
): Promise<boolean> {
  try {
    await graphCall(settings, log, {
      method: 'DELETE',
      path: `${encodeURIComponent(pageId)}/subscribed_apps`,
      params: { access_token: pageToken },
    })
    return true
  } catch (error) {
    if (error instanceof GraphError && (error.status === 404 || error.code === OBJECT_MISSING_CODE))
      return false
    throw error
  }
}

/** Graph's code for an object that does not exist (or that the token may not see). */
const OBJECT_MISSING_CODE = 100

/** Whether our app is among the page's subscribed apps with `leadgen`. */
export async function isAppSubscribedToPage(
  settings: GraphSettings,
  pageId: string,
  pageToken: string,
  log: Logger,
): Promise<boolean> {
  const body = await graphCall(settings, log, {
    path: `${encodeURIComponent(pageId)}/subscribed_apps`,
    params: { access_token: pageToken },
  })
  const apps = Array.isArray(body.data) ? body.data.filter(isJsonObject) : []
  return apps.some(
    (app) =>
      textOf(app.id) === settings.appId &&
      Array.isArray(app.subscribed_fields) &&
      app.subscribed_fields.includes('leadgen'),
  )
}

/**
 * The app's webhook subscription for pages' `leadgen` (`POST /{app-id}/subscriptions`), with the app token;
 * Meta calls `callbackUrl` with `verifyToken` to verify it before answering.
 */
export async function createPageWebhookSubscription(
  settings: GraphSettings,
  subscription: { appToken: string; callbackUrl: string; verifyToken: string },
  log: Logger,
): Promise<void> {
  const { client_id: appId } = appCredentials(settings)
  await graphCall(settings, log, {
    method: 'POST',
    path: `${encodeURIComponent(appId)}/subscriptions`,
    params: {
      object: 'page',
      callback_url: subscription.callbackUrl,
      fields: 'leadgen',
      include_values: true,
      verify_token: subscription.verifyToken,
      access_token: subscription.appToken,
    },
  })
}

/** Every page of a Graph list, following `paging.next` to the end. */
async function allPages<T>(
  settings: GraphSettings,
  log: Logger,
  first: { path: string; params: Params },
  read: (item: Record<string, unknown>) => T | undefined,
): Promise<T[]> {
  const items: T[] = []
  let body = await graphCall(settings, log, first)
  for (;;) {
    for (const item of Array.isArray(body.data) ? body.data.filter(isJsonObject) : []) {
      const value = read(item)
      if (value !== undefined) items.push(value)
    }
    const next = isJsonObject(body.paging) ? textOf(body.paging.next) : undefined
    if (!next) return items
    body = await graphCall(settings, log, { url: next })
  }
}

const LEAD_FORM_FIELDS = 'id,name,status,locale,questions,privacy_policy,created_time'

/** The page's lead forms, all of Graph's pages. */
export function listLeadForms(
  settings: GraphSettings,
  pageId: string,
  pageToken: string,
  log: Logger,
): Promise<GraphLeadForm[]> {
  return allPages(
    settings,
    log,
    {
      path: `${encodeURIComponent(pageId)}/leadgen_forms`,
      params: { fields: LEAD_FORM_FIELDS, access_token: pageToken, limit: 100 },
    },
    (item) => (textOf(item.id) ? (item as unknown as GraphLeadForm) : undefined),
  )
}

/** A lead as Graph answers it, or undefined when it lacks the id or fields every lead has. */
function leadOf(item: Record<string, unknown>): GraphLead | undefined {
  if (!textOf(item.id) || !textOf(item.created_time) || !Array.isArray(item.field_data)) return undefined
  return item as unknown as GraphLead
}

const LEAD_FIELDS = 'id,created_time,field_data,ad_id,adgroup_id,form_id'

/** `GET /{leadgen-id}` with the page's token: the spec's lead retrieval. */
export async function fetchLead(
  settings: GraphSettings,
  leadgenId: string,
  pageToken: string,
  log: Logger,
): Promise<GraphLead> {
  const body = await graphCall(settings, log, {
    path: encodeURIComponent(leadgenId),
    params: { fields: LEAD_FIELDS, access_token: pageToken },
  })
  const lead = leadOf(body)
  if (!lead)
    throw new GraphError(502, 'Graph answered a lead without its fields', undefined, undefined, undefined)
  return lead
}

/**
 * The form's leads created after `after` (all of them without it), every page of Graph's cursor, read with
 * the page's token.
 */
export function listFormLeads(
  settings: GraphSettings,
  formId: string,
  pageToken: string,
  after: Date | undefined,
  log: Logger,
): Promise<GraphLead[]> {
  const filtering =
    after &&
    JSON.stringify([
      { field: 'time_created', operator: 'GREATER_THAN', value: Math.floor(after.getTime() / 1000) },
    ])
  return allPages(
    settings,
    log,
    {
      path: `${encodeURIComponent(formId)}/leads`,
      params: { fields: LEAD_FIELDS, access_token: pageToken, limit: 100, filtering },
    },
    leadOf,
  )
}
