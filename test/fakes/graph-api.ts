import { createHash, randomBytes, randomInt } from 'node:crypto'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import {
  type FakeServer,
  type FakeServerOptions,
  type RecordedRequest,
  sendJson,
  startFakeServer,
} from './http-server.js'

export interface FakeGraphApiOptions extends FakeServerOptions {
  appId: string
  appSecret: string
  /** The prefix every path must carry: `v18.0` unless told. */
  version?: string
  /** Listings' page size when the request has no `limit`: 25 unless told. */
  pageSize?: number
  /** Challenge the callback URL, as Meta does, before accepting `/{app-id}/subscriptions`: on unless told. */
  verifyCallback?: boolean
}

export interface GraphForm {
  id: string
  name: string
  status: string
  locale: string
  questions: { key: string; label: string; type: string; id: string }[]
  privacy_policy: { url: string; link_text: string }
  created_time: string
}
export type GraphFormInput = Pick<GraphForm, 'id' | 'name'> & Partial<Omit<GraphForm, 'id' | 'name'>>
export interface GraphLeadInput {
  id: string
  created_time: Date | string
  field_data: { name: string; values: string[] }[]
  ad_id?: string
  adgroup_id?: string
}
export interface GraphFailure {
  message: string
  type?: string
  code: number
  error_subcode?: number
  status?: number
}
export type GraphThrottleCode = 4 | 17 | 32 | 613 | 80005
export type GraphPageSubscription = { id: string; name: string; subscribed_fields: string[] }
export interface GraphAppSubscription {
  object: string
  callback_url: string
  fields: string[]
  include_values: boolean
  verify_token: string
}

export interface FakeGraphApi extends FakeServer {
  /** What `client_credentials` returns: the only token `/{app-id}/subscriptions` accepts. */
  appToken: string
  addUser(token: string, pages: Record<string, string>, options?: { expired?: boolean }): void
  longLivedTokenFor(token: string): string
  revokeToken(token: string): void
  addForm(pageId: string, form: GraphFormInput): void
  addLead(formId: string, lead: GraphLeadInput): void
  throttleNext(count: number, options?: { code?: GraphThrottleCode; estimatedMinutes?: number }): void
  failNext(pathPart: string, error: GraphFailure): void
  pageSubscriptions: Map<string, GraphPageSubscription[]>
  dropPageSubscription(pageId: string): void
  appSubscriptions: GraphAppSubscription[]
}

/** A time as Graph writes it: `2024-01-15T10:20:30+0000`. */
export const graphTime = (at: Date | number) => new Date(at).toISOString().replace(/\.\d{3}Z$/, '+0000')

type Params = Record<string, string>
type Reply = { status: number; body: unknown; headers?: Record<string, string> }
type Grant =
  | { kind: 'app' }
  | { kind: 'user'; pages: Record<string, string>; expired: boolean }
  | { kind: 'page'; pageId: string }
type StoredLead = { id: string; seconds: number; order: number; pageId: string; view: object }
type StoredForm = { pageId: string; leads: StoredLead[]; sorted: boolean }
/** What a listing needs of its request: Graph's `next` repeats the path and the params, token included. */
type Call = { pathname: string; params: Params; token: string }

const ok = (body: unknown): Reply => ({ status: 200, body })

/** Graph's error envelope, HTTP 400 unless told (throttling and bad tokens too), with a random `fbtrace_id`. */
function graphError(code: number, message: string, more: Partial<GraphFailure> = {}): Reply {
  const { status = 400, type = 'OAuthException', error_subcode } = more
  const subcode = error_subcode === undefined ? {} : { error_subcode }
  const transient = code in THROTTLED ? { is_transient: true } : {}
  const fbtrace_id = randomBytes(8).toString('base64url')
  return { status, body: { error: { message, type, code, ...subcode, ...transient, fbtrace_id } } }
}

const THROTTLED: Record<GraphThrottleCode, string> = {
  4: '(#4) Application request limit reached',
  17: '(#17) User request limit reached',
  32: '(#32) Page request limit reached',
  613: '(#613) Calls to this api have exceeded the rate limit.',
  80005: '(#80005) There have been too many leadgen api calls to this ad account.',
}
const INVALIDATED =
  'The session has been invalidated because the user changed their password or Facebook has changed the session for security reasons.'
const CANNOT_LOAD =
  'does not exist, cannot be loaded due to missing permissions, or does not support this operation.'

const unknownPath = (pathname: string) => graphError(2500, `Unknown path components: ${pathname}`)
const missing = (name: string) => graphError(100, `(#100) The parameter ${name} is required`)
const cannotParse = () => graphError(190, 'Invalid OAuth access token - Cannot parse access token')
const pageTokenOnly = () => graphError(190, '(#190) This method must be called with a Page Access Token')
const unsupported = (method: string, id: string) =>
  graphError(100, `Unsupported ${method.toLowerCase()} request. Object with ID '${id}' ${CANNOT_LOAD}`, {
    type: 'GraphMethodException',
  })

/** The edges only the page's own token may use (for `leads`, the token of the form's page). */
const PAGE_EDGES = new Set([
  'GET subscribed_apps',
  'POST subscribed_apps',
  'DELETE subscribed_apps',
  'GET leadgen_forms',
  'GET leads',
])
const COMPARE: Record<string, (a: number, b: number) => boolean> = {
  GREATER_THAN: (a, b) => a > b,
  LESS_THAN: (a, b) => a < b,
}

/** `filtering=[{"field":"time_created","operator":"GREATER_THAN","value":<unix seconds>}]`, as Graph reads it. */
function leadFilter(raw: string | undefined): ((lead: StoredLead) => boolean) | Reply {
  let rules: { field?: unknown; operator?: unknown; value?: unknown }[] = []
  try {
    rules = JSON.parse(raw ?? '[]')
  } catch {}
  if (!Array.isArray(rules)) return graphError(100, '(#100) param filtering must be an array')
  const tests: ((lead: StoredLead) => boolean)[] = []
  for (const { field, operator, value } of rules) {
    const compare = COMPARE[String(operator)]
    if (field !== 'time_created' || !compare || !Number.isFinite(Number(value)))
      return graphError(100, `(#100) Filtering on ${field} with ${operator} is not supported`)
    tests.push((lead) => compare(lead.seconds, Number(value)))
  }
  return (lead) => tests.every((test) => test(lead))
}

/** The query, then a form-urlencoded or JSON body (the body wins); undefined when the JSON does not parse. */
function paramsOf({ headers, body }: RecordedRequest, url: URL): Params | undefined {
  const params: Params = Object.fromEntries(url.searchParams)
  const type = headers['content-type'] ?? ''
  if (body && type.startsWith('application/x-www-form-urlencoded'))
    return Object.assign(params, Object.fromEntries(new URLSearchParams(body)))
  if (!body || !type.startsWith('application/json')) return params
  try {
    for (const [name, value] of Object.entries(JSON.parse(body) as object))
      params[name] = typeof value === 'string' ? value : JSON.stringify(value)
    return params
  } catch {
    return undefined
  }
}

const tokenOf = (params: Params, headers: IncomingHttpHeaders) =>
  params.access_token ?? /^(?:Bearer|OAuth)\s+(\S+)$/i.exec(headers.authorization ?? '')?.[1]

/** Graph takes a list as `a,b` or as a JSON array. */
const listOf = (raw = ''): string[] =>
  raw.startsWith('[') ? (JSON.parse(raw) as unknown[]).map(String) : raw.split(',').filter(Boolean)

const cursorOf = (id: string) => Buffer.from(id).toString('base64url')

/** Meta's check of a callback URL: a GET with a challenge that must come back as the body of a 200. */
async function challengeFailure(callbackUrl: string, verifyToken: string): Promise<string | undefined> {
  const challenge = String(randomInt(100_000_000, 2_000_000_000))
  const failed = "The URL couldn't be validated."
  try {
    const url = new URL(callbackUrl)
    const hub = { 'hub.mode': 'subscribe', 'hub.challenge': challenge, 'hub.verify_token': verifyToken }
    for (const [name, value] of Object.entries(hub)) url.searchParams.set(name, value)
    const response = await fetch(url, { signal: AbortSignal.timeout(5_000) })
    const body = await response.text()
    if (response.status !== 200)
      return `${failed} Callback verification failed with the following errors: HTTP Status Code = ${response.status}; HTTP Message = ${response.statusText}`
    if (body !== challenge)
      return `${failed} Response does not match challenge, expected value="${challenge}", received="${body.slice(0, 100)}"`
  } catch {
    return `${failed} Couldn't connect to server`
  }
}

const question = (key: string, label: string) => ({ key, label, type: key.toUpperCase(), id: cursorOf(key) })
const withDefaults = (form: GraphFormInput): GraphForm => ({
  status: 'ACTIVE',
  locale: 'en_US',
  questions: [question('email', 'Email'), question('full_name', 'Full name')],
  privacy_policy: { url: 'https://example.com/privacy', link_text: 'Privacy' },
  created_time: graphTime(Date.now()),
  ...form,
})

/**
 * Meta's Graph API on 127.0.0.1 as the leads module uses it: app, long-lived and page tokens, page and app
 * subscriptions (with Meta's callback challenge), lead forms, leads by form and by id; with Graph's version
 * prefix, token rules, cursor paging, errors and throttling answers. Records every request.
 */
export async function startFakeGraphApi(options: FakeGraphApiOptions): Promise<FakeGraphApi> {
  const { appId, appSecret, version = 'v18.0', pageSize = 25, verifyCallback = true } = options
  const appToken = `${appId}|${createHash('sha256').update(appSecret).digest('base64url').slice(0, 27)}`
  const tokens = new Map<string, Grant>([[appToken, { kind: 'app' }]])
  const revoked = new Set<string>()
  const knownPages = new Set<string>()
  const formsByPage = new Map<string, GraphForm[]>()
  const forms = new Map<string, StoredForm>()
  const leads = new Map<string, StoredLead>()
  const pageSubscriptions = new Map<string, GraphPageSubscription[]>()
  const appSubscriptions: GraphAppSubscription[] = []
  const failures: { pathPart: string; failure: GraphFailure }[] = []
  let throttle: { count: number; code: GraphThrottleCode; estimatedMinutes?: number } = { count: 0, code: 4 }
  let leadOrder = 0
  let baseUrl = ''

  const longLivedTokenFor = (token: string) => `${token}-long`
  /** The apps subscribed to the page, ours left out. */
  const othersThan = (pageId: string) =>
    (pageSubscriptions.get(pageId) ?? []).filter((app) => app.id !== appId)

  function authenticate(token: string | undefined, allowExpired = false): Grant | Reply {
    if (!token) return graphError(104, 'An access token is required to request this resource.')
    const grant = tokens.get(token)
    if (revoked.has(token))
      return graphError(190, `Error validating access token: ${INVALIDATED}`, { error_subcode: 460 })
    if (!grant) return cannotParse()
    if (grant.kind !== 'user' || !grant.expired || allowExpired) return grant
    const expiredAt = new Date(Date.now() - 86_400_000).toUTCString()
    const message = `Error validating access token: Session has expired on ${expiredAt}. The current time is ${new Date().toUTCString()}.`
    return graphError(190, message, { error_subcode: 463 })
  }

  function accessToken({ client_id, client_secret, grant_type, fb_exchange_token }: Params): Reply {
    if (client_id !== appId) return graphError(101, 'Error validating application. Invalid application ID.')
    if (client_secret !== appSecret) return graphError(1, 'Error validating client secret.')
    if (grant_type === 'client_credentials') return ok({ access_token: appToken, token_type: 'bearer' })
    if (grant_type !== 'fb_exchange_token')
      return graphError(100, `(#100) Unsupported grant_type: ${grant_type}`)
    if (!fb_exchange_token) return missing('fb_exchange_token')
    // The service exchanges its stored token once it has expired: an expired user token is accepted here.
    const grant = authenticate(fb_exchange_token, true)
    if ('status' in grant) return grant
    if (grant.kind !== 'user') return cannotParse()
    const access_token = longLivedTokenFor(fb_exchange_token)
    tokens.set(access_token, { kind: 'user', pages: grant.pages, expired: false })
    return ok({ access_token, token_type: 'bearer', expires_in: 5183944 })
  }

  /** The page of `items` after the `after` cursor, with Graph's `paging` (`next` only while more remain). */
  function listing<T extends { id: string }>(
    call: Call,
    items: T[],
    view: (item: T) => unknown,
    keep = (_: T) => true,
  ) {
    const { pathname, params, token } = call
    const limit = /^[1-9]\d*$/.test(params.limit ?? '') ? Number(params.limit) : pageSize
    const afterId = params.after && Buffer.from(params.after, 'base64url').toString()
    const start = afterId ? items.findIndex((item) => item.id === afterId) + 1 : 0
    if (afterId && start === 0) return graphError(100, '(#100) The after cursor is invalid')
    // One more than the page holds tells whether another page follows.
    const data: T[] = []
    for (let index = start; index < items.length && data.length <= limit; index++)
      if (keep(items[index] as T)) data.push(items[index] as T)
    const more = data.length > limit
    if (more) data.pop()
    const [first, last] = [data[0], data.at(-1)]
    if (!first || !last) return ok({ data: [] })
    const cursors = { before: cursorOf(first.id), after: cursorOf(last.id) }
    const { before: _, ...rest } = params
    const query = new URLSearchParams({ ...rest, access_token: token, after: cursors.after })
    return ok({
      data: data.map(view),
      paging: { cursors, ...(more ? { next: `${baseUrl}${pathname}?${query}` } : {}) },
    })
  }

  function formLeads(form: StoredForm, call: Call): Reply {
    const keep = leadFilter(call.params.filtering)
    if (typeof keep !== 'function') return keep
    if (!form.sorted) {
      // Newest first, as Graph lists them; of two at the same second, the later added first.
      form.leads.sort((a, b) => b.seconds - a.seconds || b.order - a.order)
      form.sorted = true
    }
    return listing(call, form.leads, (lead) => lead.view, keep)
  }

  function subscribedApps(method: string, pageId: string, params: Params): Reply {
    if (method === 'GET') return ok({ data: pageSubscriptions.get(pageId) ?? [] })
    if (method === 'DELETE') {
      pageSubscriptions.set(pageId, othersThan(pageId))
      return ok({ success: true })
    }
    const subscribed_fields = listOf(params.subscribed_fields)
    if (subscribed_fields.length === 0) return missing('subscribed_fields')
    pageSubscriptions.set(pageId, [
      ...othersThan(pageId),
      { id: appId, name: 'Leads app', subscribed_fields },
    ])
    return ok({ success: true })
  }

  async function subscriptions(method: string, params: Params): Promise<Reply> {
    if (method === 'GET') {
      const data = appSubscriptions.map(({ object, callback_url, fields }) => {
        return { object, callback_url, active: true, fields: fields.map((name) => ({ name, version })) }
      })
      return ok({ data })
    }
    const { object, callback_url, fields, include_values, verify_token = '' } = params
    if (!object || !callback_url || !fields)
      return missing(!object ? 'object' : !callback_url ? 'callback_url' : 'fields')
    const failure = verifyCallback && (await challengeFailure(callback_url, verify_token))
    if (failure) return graphError(2200, `(#2200) callback verification failed: ${failure}`)
    // One subscription per object: a new one replaces the old, as Graph does.
    const replaced = appSubscriptions.findIndex((known) => known.object === object)
    const subscription = {
      object,
      callback_url,
      fields: listOf(fields),
      include_values: include_values === 'true',
      verify_token,
    }
    appSubscriptions.splice(replaced < 0 ? appSubscriptions.length : replaced, 1, subscription)
    return ok({ success: true })
  }

  async function route(request: RecordedRequest, pathname: string, path: string[], params: Params) {
    const { method } = request
    const [id = '', edge, ...deeper] = path
    if (deeper.length > 0) return unknownPath(pathname)
    if (id === 'oauth' && edge === 'access_token') return accessToken(params)
    const token = tokenOf(params, request.headers)
    const grant = authenticate(token)
    if ('status' in grant) return grant
    const isPage = (pageId: string) => grant.kind === 'page' && grant.pageId === pageId
    if (edge === undefined && method === 'GET') {
      const lead = leads.get(id)
      if (lead) return isPage(lead.pageId) ? ok(lead.view) : pageTokenOnly()
      if (!knownPages.has(id)) return unsupported(method, id)
      if (!listOf(params.fields).includes('access_token')) return ok({ id })
      const pageToken = grant.kind === 'user' ? grant.pages[id] : undefined
      if (pageToken) return ok({ access_token: pageToken, id })
      return graphError(10, '(#10) The user must be an administrator, editor, or moderator of the page')
    }
    if (edge === 'subscriptions' && id === appId && (method === 'GET' || method === 'POST'))
      return grant.kind === 'app'
        ? subscriptions(method, params)
        : graphError(15, '(#15) This method must be called with an app access_token.')
    if (!PAGE_EDGES.has(`${method} ${edge}`)) return unknownPath(pathname)
    const form = forms.get(id)
    const pageId = edge === 'leads' ? form?.pageId : knownPages.has(id) ? id : undefined
    if (pageId === undefined) return unsupported(method, id)
    if (!isPage(pageId)) return pageTokenOnly()
    if (edge === 'subscribed_apps') return subscribedApps(method, id, params)
    const call = { pathname, params, token: token as string }
    return form ? formLeads(form, call) : listing(call, formsByPage.get(id) ?? [], (found) => found)
  }

  function throttled(): Reply {
    throttle.count--
    const reply = graphError(throttle.code, THROTTLED[throttle.code])
    if (throttle.estimatedMinutes === undefined) return reply
    const usage = { type: 'leadgen', call_count: 100, total_cputime: 25, total_time: 25 }
    const estimate = { ...usage, estimated_time_to_regain_access: throttle.estimatedMinutes }
    const usageHeader = JSON.stringify({ '100200300400500': [estimate] })
    return { ...reply, headers: { 'x-business-use-case-usage': usageHeader } }
  }

  async function handle(request: RecordedRequest): Promise<Reply> {
    const url = new URL(request.url, 'http://graph.invalid')
    const [prefix, ...path] = url.pathname.split('/').filter(Boolean).map(decodeURIComponent)
    const params = paramsOf(request, url)
    const appTokenCall =
      path.join('/') === 'oauth/access_token' && params?.grant_type === 'client_credentials'
    if (throttle.count > 0 && !appTokenCall) return throttled()
    const failed = failures.findIndex(({ pathPart }) => url.pathname.includes(pathPart))
    if (failed >= 0) {
      const { failure } = failures.splice(failed, 1)[0] as (typeof failures)[number]
      return graphError(failure.code, failure.message, failure)
    }
    if (prefix !== version) return unknownPath(url.pathname)
    if (!params) return graphError(100, '(#100) The request body is not valid JSON')
    return route(request, url.pathname, path, params)
  }

  const respond = (request: RecordedRequest, response: ServerResponse) => {
    const send = (reply: Reply) => {
      for (const [name, value] of Object.entries(reply.headers ?? {})) response.setHeader(name, value)
      sendJson(response, reply.status, reply.body)
    }
    // A path or list that does not even parse is a path Graph does not know.
    handle(request).then(send, () => send(unknownPath(request.url)))
  }

  const server = await startFakeServer(respond, options)
  baseUrl = server.url
  return {
    ...server,
    appToken,
    longLivedTokenFor,
    pageSubscriptions,
    appSubscriptions,
    addUser(token, pages, { expired = false } = {}) {
      tokens.set(token, { kind: 'user', pages: { ...pages }, expired })
      for (const [pageId, pageToken] of Object.entries(pages)) {
        knownPages.add(pageId)
        tokens.set(pageToken, { kind: 'page', pageId })
      }
    },
    revokeToken: (token) => void revoked.add(token),
    addForm(pageId, form) {
      if (forms.has(form.id)) throw new Error(`addForm: form ${form.id} was already added`)
      knownPages.add(pageId)
      forms.set(form.id, { pageId, leads: [], sorted: true })
      formsByPage.set(pageId, [...(formsByPage.get(pageId) ?? []), withDefaults(form)])
    },
    addLead(formId, { id, created_time, field_data, ad_id, adgroup_id }) {
      const form = forms.get(formId)
      if (!form) throw new Error(`addLead: form ${formId} was not added`)
      if (leads.has(id)) throw new Error(`addLead: lead ${id} was already added`)
      const at = new Date(created_time).getTime()
      // Webhooks name the ad `adgroup_id`; Graph's lead object names the same id `ad_id`.
      const adId = ad_id ?? adgroup_id
      const view = {
        id,
        created_time: graphTime(at),
        field_data,
        ...(adId ? { ad_id: adId } : {}),
        form_id: formId,
      }
      const lead = { id, seconds: Math.floor(at / 1000), order: leadOrder++, pageId: form.pageId, view }
      form.leads.push(lead)
      form.sorted = false
      leads.set(id, lead)
    },
    throttleNext(count, { code = 4, estimatedMinutes } = {}) {
      throttle = { count, code, estimatedMinutes }
    },
    failNext: (pathPart, error) => void failures.push({ pathPart, failure: error }),
    dropPageSubscription(pageId) {
      pageSubscriptions.set(pageId, othersThan(pageId))
    },
  }
}
