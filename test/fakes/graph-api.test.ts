import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { type FakeGraphApi, type FakeGraphApiOptions, startFakeGraphApi } from './graph-api.js'

// The fake is what the leads service's tests trust to behave like Graph: these check it does, over plain HTTP.

const APP = { appId: '901234567', appSecret: 'graph-app-secret' }
const GRAPH_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\+0000$/
const PAGE_TOKEN_ONLY = '(#190) This method must be called with a Page Access Token'

let graph: FakeGraphApi
const started: { close(): Promise<void> }[] = []

async function startGraph(options: Partial<FakeGraphApiOptions> = {}) {
  const fake = await startFakeGraphApi({ ...APP, ...options })
  started.push(fake)
  fake.addUser('user-token', { 'page-1': 'page-1-token', 'page-2': 'page-2-token' })
  fake.addUser('other-user-token', { 'page-3': 'page-3-token' })
  fake.addForm('page-1', { id: 'form-1', name: 'Spring offer' })
  return fake
}

beforeEach(async () => {
  graph = await startGraph()
})
afterEach(async () => {
  await Promise.all(started.splice(0).map((server) => server.close()))
})

/** What Graph answers: an error, a listing (`data`, `paging`), or an object's fields. */
type GraphBody = {
  error: { message: string; type: string; code: number; error_subcode?: number; fbtrace_id: string }
  data: { id: string; [field: string]: unknown }[]
  paging: { cursors: { before: string; after: string }; next?: string }
  [field: string]: unknown
}
type Answer = { status: number; headers: Headers; body: GraphBody }

async function answerOf(response: Response): Promise<Answer> {
  return { status: response.status, headers: response.headers, body: (await response.json()) as GraphBody }
}

/** A Graph call on the fake: the path under the version, the params in the query (GET) or a form body (POST). */
async function call(
  method: 'GET' | 'POST',
  path: string,
  params: Record<string, string>,
  init: RequestInit = {},
) {
  const query = new URLSearchParams(params)
  if (method === 'GET') return answerOf(await fetch(`${graph.url}/v18.0${path}?${query}`, init))
  const headers = { 'content-type': 'application/x-www-form-urlencoded', ...init.headers }
  return answerOf(await fetch(`${graph.url}/v18.0${path}`, { ...init, method, headers, body: query }))
}

const appTokenCall = () =>
  call('GET', '/oauth/access_token', {
    grant_type: 'client_credentials',
    client_id: APP.appId,
    client_secret: APP.appSecret,
  })
const exchange = (token: string) =>
  call('GET', '/oauth/access_token', {
    grant_type: 'fb_exchange_token',
    client_id: APP.appId,
    client_secret: APP.appSecret,
    fb_exchange_token: token,
  })
const pageToken = (userToken: string, pageId = 'page-1') =>
  call('GET', `/${pageId}`, { fields: 'access_token', access_token: userToken })

/** Graph's error envelope: HTTP 400 with the code, and a trace id. */
function expectGraphError(answer: Answer, code: number, more: Record<string, unknown> = {}) {
  expect(answer.status).toBe(400)
  expect(answer.body.error).toMatchObject({ code, type: 'OAuthException', ...more })
  expect(answer.body.error.fbtrace_id).toEqual(expect.any(String))
}

describe('tokens', () => {
  it('answers the app token for the right secret, and code 1 for a wrong one', async () => {
    const answer = await appTokenCall()
    expect(answer.status).toBe(200)
    expect(answer.body).toEqual({ access_token: graph.appToken, token_type: 'bearer' })
    expect(graph.appToken.startsWith(`${APP.appId}|`)).toBe(true)
    expect(graph.appToken).not.toContain(APP.appSecret)
    const wrong = await call('GET', '/oauth/access_token', {
      grant_type: 'client_credentials',
      client_id: APP.appId,
      client_secret: 'not-the-secret',
    })
    expectGraphError(wrong, 1, { message: 'Error validating client secret.' })
  })

  it('answers 2500 to a path without the configured version', async () => {
    const unversioned = await answerOf(await fetch(`${graph.url}/page-1?access_token=user-token`))
    expectGraphError(unversioned, 2500, { message: expect.stringContaining('Unknown path components') })
    const older = await answerOf(await fetch(`${graph.url}/v17.0/page-1?access_token=user-token`))
    expectGraphError(older, 2500)
    expectGraphError(await call('GET', '/page-1/no_such_edge', { access_token: 'page-1-token' }), 2500)
  })

  it('exchanges a user token, expired ones included, for a long-lived one valid for the same pages', async () => {
    graph.addUser('expired-token', { 'page-9': 'page-9-token' }, { expired: true })
    expectGraphError(await pageToken('expired-token', 'page-9'), 190, { error_subcode: 463 })

    const exchanged = await exchange('expired-token')
    expect(exchanged.status).toBe(200)
    const longLived = graph.longLivedTokenFor('expired-token')
    expect(exchanged.body).toEqual({ access_token: longLived, token_type: 'bearer', expires_in: 5183944 })
    expect((await pageToken(longLived, 'page-9')).body).toEqual({
      access_token: 'page-9-token',
      id: 'page-9',
    })

    expect((await exchange('user-token')).body.access_token).toBe(graph.longLivedTokenFor('user-token'))
    graph.revokeToken('other-user-token')
    expectGraphError(await exchange('other-user-token'), 190, { error_subcode: 460 })
    const unknown = await exchange('never-issued')
    expectGraphError(unknown, 190, { message: 'Invalid OAuth access token - Cannot parse access token' })
    expect(unknown.body.error.error_subcode).toBeUndefined()
  })

  it('gives the page token to a user managing the page, with the token as parameter or header', async () => {
    expect((await pageToken('user-token')).body).toEqual({ access_token: 'page-1-token', id: 'page-1' })
    for (const authorization of ['Bearer user-token', 'OAuth user-token']) {
      const answer = await call('GET', '/page-2', { fields: 'access_token' }, { headers: { authorization } })
      expect(answer.body).toEqual({ access_token: 'page-2-token', id: 'page-2' })
    }
    const notManaged = await pageToken('other-user-token')
    expectGraphError(notManaged, 10, {
      message: '(#10) The user must be an administrator, editor, or moderator of the page',
    })
    expectGraphError(await pageToken('never-issued'), 190)
  })

  it('refuses a revoked token, user or page, with 190 and subcode 460', async () => {
    graph.revokeToken('page-1-token')
    const forms = await call('GET', '/page-1/leadgen_forms', { access_token: 'page-1-token' })
    expectGraphError(forms, 190, { error_subcode: 460 })
    expect(forms.body.error.message).toMatch(
      /^Error validating access token: The session has been invalidated/,
    )
    graph.revokeToken('user-token')
    expectGraphError(await pageToken('user-token'), 190, { error_subcode: 460 })
    // The other page's token is untouched.
    expect((await call('GET', '/page-2/leadgen_forms', { access_token: 'page-2-token' })).status).toBe(200)
  })
})

describe('page subscriptions', () => {
  it('subscribes our app with the page token only, lists it, and loses it when Meta drops it', async () => {
    const subscribed = await call('POST', '/page-1/subscribed_apps', {
      subscribed_fields: 'leadgen',
      access_token: 'page-1-token',
    })
    expect(subscribed).toMatchObject({ status: 200, body: { success: true } })
    const ours = { id: APP.appId, name: expect.any(String), subscribed_fields: ['leadgen'] }
    expect(graph.pageSubscriptions.get('page-1')).toEqual([ours])
    const listed = await call('GET', '/page-1/subscribed_apps', { access_token: 'page-1-token' })
    expect(listed.body).toEqual({ data: [ours] })

    for (const token of ['user-token', graph.appToken, 'page-2-token']) {
      const refused = await call('POST', '/page-1/subscribed_apps', {
        subscribed_fields: 'leadgen',
        access_token: token,
      })
      expectGraphError(refused, 190, { message: PAGE_TOKEN_ONLY })
      const notListed = await call('GET', '/page-1/subscribed_apps', { access_token: token })
      expectGraphError(notListed, 190, { message: PAGE_TOKEN_ONLY })
    }
    const noFields = await call('POST', '/page-1/subscribed_apps', { access_token: 'page-1-token' })
    expectGraphError(noFields, 100, { message: '(#100) The parameter subscribed_fields is required' })

    graph.dropPageSubscription('page-1')
    expect((await call('GET', '/page-1/subscribed_apps', { access_token: 'page-1-token' })).body).toEqual({
      data: [],
    })
  })

  it('reads a JSON body, a list as a JSON array, and lets the body win over the query', async () => {
    const response = await fetch(`${graph.url}/v18.0/page-2/subscribed_apps?access_token=page-1-token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ subscribed_fields: ['leadgen', 'feed'], access_token: 'page-2-token' }),
    })
    expect((await answerOf(response)).body).toEqual({ success: true })
    expect(graph.pageSubscriptions.get('page-2')?.[0]?.subscribed_fields).toEqual(['leadgen', 'feed'])
  })
})

describe('app subscriptions', () => {
  /** A webhook endpoint as the service runs it: echoes `hub.challenge` for the right verify token, else 403. */
  async function startCallback() {
    const received: URLSearchParams[] = []
    const server = createServer((request, response) => {
      const query = new URL(request.url ?? '/', 'http://callback').searchParams
      received.push(query)
      const answer =
        query.get('hub.verify_token') === 'echo-wrong' ? 'not the challenge' : query.get('hub.challenge')
      const right = query.get('hub.mode') === 'subscribe' && query.get('hub.verify_token') !== 'wrong-token'
      response
        .writeHead(right ? 200 : 403, { 'content-type': 'text/plain' })
        .end(right ? answer : 'Forbidden')
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    started.push({ close: () => new Promise((resolve) => server.close(() => resolve())) })
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/leads`, received }
  }

  const subscribe = (token: string, params: Record<string, string>) =>
    call('POST', `/${APP.appId}/subscriptions`, { ...params, access_token: token })

  it('verifies the callback as Meta does, then records the subscription, with the app token only', async () => {
    const callback = await startCallback()
    const params: Record<string, string> = {
      object: 'page',
      callback_url: callback.url,
      fields: 'leadgen',
      include_values: 'true',
      verify_token: 'verify-me',
    }
    const appToken = String((await appTokenCall()).body.access_token)
    expect(await subscribe(appToken, params)).toMatchObject({ status: 200, body: { success: true } })
    expect(callback.received).toHaveLength(1)
    expect(callback.received[0]?.get('hub.mode')).toBe('subscribe')
    expect(callback.received[0]?.get('hub.verify_token')).toBe('verify-me')
    expect(callback.received[0]?.get('hub.challenge')).toMatch(/^\d+$/)
    const recorded = { ...params, fields: ['leadgen'], include_values: true }
    expect(graph.appSubscriptions).toEqual([recorded])
    const listed = await call('GET', `/${APP.appId}/subscriptions`, { access_token: appToken })
    expect(listed.body).toEqual({
      data: [
        {
          object: 'page',
          callback_url: callback.url,
          active: true,
          fields: [{ name: 'leadgen', version: 'v18.0' }],
        },
      ],
    })

    for (const token of ['user-token', 'page-1-token']) {
      const message = '(#15) This method must be called with an app access_token.'
      expectGraphError(await subscribe(token, params), 15, { message })
      expectGraphError(await call('GET', `/${APP.appId}/subscriptions`, { access_token: token }), 15)
    }
    for (const name of ['object', 'callback_url', 'fields']) {
      const { [name]: _, ...without } = params
      const answer = await subscribe(appToken, without)
      expectGraphError(answer, 100, { message: `(#100) The parameter ${name} is required` })
    }

    // A callback that refuses the verify token, or answers something else than the challenge, is not accepted.
    for (const verify_token of ['wrong-token', 'echo-wrong']) {
      const refused = await subscribe(appToken, { ...params, verify_token })
      expectGraphError(refused, 2200, {
        message: expect.stringMatching(/^\(#2200\) callback verification failed: /),
      })
    }
    expect(graph.appSubscriptions).toEqual([recorded])

    // One subscription per object: the latest replaces the earlier.
    await subscribe(appToken, { ...params, callback_url: `${callback.url}?v=2` })
    expect(graph.appSubscriptions).toEqual([{ ...recorded, callback_url: `${callback.url}?v=2` }])
  })

  it('skips the callback check when told, and refuses an unreachable callback otherwise', async () => {
    const params = { object: 'page', callback_url: 'http://127.0.0.1:9/nothing-listens', fields: 'leadgen' }
    const refused = await subscribe(graph.appToken, params)
    expectGraphError(refused, 2200, { message: expect.stringContaining("Couldn't connect") })
    graph = await startGraph({ verifyCallback: false })
    expect((await subscribe(graph.appToken, params)).body).toEqual({ success: true })
  })
})

describe('lead forms and leads', () => {
  it('lists the forms with their defaults and cursor paging, to the page token only', async () => {
    graph = await startGraph({ pageSize: 2 })
    graph.addForm('page-1', { id: 'form-2', name: 'Summer offer', status: 'ARCHIVED', locale: 'fr_FR' })
    graph.addForm('page-1', { id: 'form-3', name: 'Autumn offer' })
    graph.addForm('page-2', { id: 'form-4', name: 'Other page' })

    const first = await call('GET', '/page-1/leadgen_forms', { access_token: 'page-1-token' })
    expect(first.body.data.map((form) => form.id)).toEqual(['form-1', 'form-2'])
    expect(first.body.data[0]).toEqual({
      id: 'form-1',
      name: 'Spring offer',
      status: 'ACTIVE',
      locale: 'en_US',
      questions: [
        { key: 'email', label: 'Email', type: 'EMAIL', id: expect.any(String) },
        { key: 'full_name', label: 'Full name', type: 'FULL_NAME', id: expect.any(String) },
      ],
      privacy_policy: { url: 'https://example.com/privacy', link_text: 'Privacy' },
      created_time: expect.stringMatching(GRAPH_TIME),
    })
    expect(first.body.data[1]).toMatchObject({ status: 'ARCHIVED', locale: 'fr_FR' })
    expect(first.body.paging.cursors).toEqual({ before: expect.any(String), after: expect.any(String) })
    const next = first.body.paging.next ?? ''
    expect(next.startsWith(`${graph.url}/v18.0/page-1/leadgen_forms?`)).toBe(true)
    const second = await answerOf(await fetch(next))
    expect(second.body.data.map((form) => form.id)).toEqual(['form-3'])
    expect(second.body.paging.next).toBeUndefined()

    for (const token of ['user-token', 'page-2-token', graph.appToken]) {
      const refused = await call('GET', '/page-1/leadgen_forms', { access_token: token })
      expectGraphError(refused, 190, { message: PAGE_TOKEN_ONLY })
    }
    const unknown = await call('GET', '/page-1/leadgen_forms', { access_token: 'never-issued' })
    expectGraphError(unknown, 190, { message: 'Invalid OAuth access token - Cannot parse access token' })
  })

  it('pages through a form’s leads newest first, strictly after the filter’s time, to the page token only', async () => {
    const start = Date.parse('2024-01-15T10:00:00Z')
    // Added out of order: Graph lists by creation time, newest first.
    for (const minute of [3, 0, 7, 1, 9, 4, 2, 8, 6, 5, 11, 10]) {
      graph.addLead('form-1', {
        id: `lead-${minute}`,
        created_time: new Date(start + minute * 60_000),
        field_data: [{ name: 'email', values: [`lead-${minute}@example.com`] }],
        ad_id: 'ad-1',
      })
    }
    const filtering = JSON.stringify([
      { field: 'time_created', operator: 'GREATER_THAN', value: (start + 4 * 60_000) / 1000 },
    ])
    const params = { filtering, limit: '3' }
    // The token in a header: Graph's `next` carries it as a parameter, so the next page needs no header.
    let answer = await call('GET', '/form-1/leads', params, {
      headers: { authorization: 'Bearer page-1-token' },
    })
    const pages: string[][] = []
    for (;;) {
      expect(answer.status).toBe(200)
      pages.push(answer.body.data.map((lead) => lead.id))
      if (!answer.body.paging.next) break
      const next = new URL(answer.body.paging.next)
      expect(next.origin + next.pathname).toBe(`${graph.url}/v18.0/form-1/leads`)
      expect(Object.fromEntries(next.searchParams)).toMatchObject({ ...params, access_token: 'page-1-token' })
      answer = await answerOf(await fetch(next))
    }
    // lead-4 is exactly at the filter's time: strictly greater leaves it out.
    expect(pages).toEqual([['lead-11', 'lead-10', 'lead-9'], ['lead-8', 'lead-7', 'lead-6'], ['lead-5']])
    expect(answer.body.data[0]).toEqual({
      id: 'lead-5',
      created_time: '2024-01-15T10:05:00+0000',
      field_data: [{ name: 'email', values: ['lead-5@example.com'] }],
      ad_id: 'ad-1',
      form_id: 'form-1',
    })

    const all = await call('GET', '/form-1/leads', { access_token: 'page-1-token' })
    expect(all.body.data).toHaveLength(12)
    expect(all.body.paging.next).toBeUndefined()
    for (const token of ['user-token', 'page-2-token']) {
      const refused = await call('GET', '/form-1/leads', { access_token: token })
      expectGraphError(refused, 190, { message: PAGE_TOKEN_ONLY })
    }
    expectGraphError(await call('GET', '/form-1/leads', { access_token: 'never-issued' }), 190)
  })

  it('answers a lead by id to its page’s token, and code 100 for an id it does not know', async () => {
    graph.addLead('form-1', {
      id: 'lead-1',
      created_time: '2024-01-15T10:20:30+0000',
      field_data: [{ name: 'full_name', values: ['Ada Lovelace'] }],
      adgroup_id: 'ad-7',
    })
    const lead = await call('GET', '/lead-1', { access_token: 'page-1-token' })
    expect(lead.body).toEqual({
      id: 'lead-1',
      created_time: '2024-01-15T10:20:30+0000',
      field_data: [{ name: 'full_name', values: ['Ada Lovelace'] }],
      ad_id: 'ad-7',
      form_id: 'form-1',
    })
    for (const token of ['page-2-token', 'user-token']) {
      expectGraphError(await call('GET', '/lead-1', { access_token: token }), 190, {
        message: PAGE_TOKEN_ONLY,
      })
    }
    const unknown = await call('GET', '/lead-404', { access_token: 'page-1-token' })
    expectGraphError(unknown, 100, {
      type: 'GraphMethodException',
      message:
        "Unsupported get request. Object with ID 'lead-404' does not exist, cannot be loaded due to missing permissions, or does not support this operation.",
    })
  })
})

describe('throttling and failures', () => {
  const forms = () => call('GET', '/page-1/leadgen_forms', { access_token: 'page-1-token' })

  it('throttles the next requests with HTTP 400, code 4 by default, but never the app token call', async () => {
    graph.throttleNext(2)
    const first = await forms()
    expectGraphError(first, 4, { message: '(#4) Application request limit reached', is_transient: true })
    expect(first.headers.get('x-business-use-case-usage')).toBeNull()
    expect((await appTokenCall()).status).toBe(200)
    expectGraphError(await pageToken('user-token'), 4)
    expect((await forms()).status).toBe(200)
  })

  it('answers each throttling code with its message, and the usage header when an estimate is given', async () => {
    const messages = {
      17: '(#17) User request limit reached',
      32: '(#32) Page request limit reached',
      613: '(#613) Calls to this api have exceeded the rate limit.',
    } as const
    for (const [code, message] of Object.entries(messages)) {
      graph.throttleNext(1, { code: Number(code) as 17 | 32 | 613 })
      expectGraphError(await forms(), Number(code), { message, is_transient: true })
    }
    graph.throttleNext(1, { code: 80005, estimatedMinutes: 7 })
    const throttled = await forms()
    expectGraphError(throttled, 80005, {
      message: '(#80005) There have been too many leadgen api calls to this ad account.',
      is_transient: true,
    })
    const usage = JSON.parse(throttled.headers.get('x-business-use-case-usage') ?? '{}')
    const [business] = Object.values(usage) as Record<string, unknown>[][]
    expect(business).toEqual([
      {
        type: 'leadgen',
        call_count: 100,
        total_cputime: 25,
        total_time: 25,
        estimated_time_to_regain_access: 7,
      },
    ])
    expect((await forms()).status).toBe(200)
  })

  it('fails the next request whose path matches, once, with the error as told', async () => {
    graph.failNext('/leads', { message: 'Please reduce the amount of data', code: 1 })
    graph.failNext('/lead-1', {
      message: 'Service temporarily unavailable',
      code: 2,
      type: 'Other',
      status: 503,
    })
    expect((await forms()).status).toBe(200)
    const leads = () => call('GET', '/form-1/leads', { access_token: 'page-1-token' })
    expectGraphError(await leads(), 1, { message: 'Please reduce the amount of data' })
    expect((await leads()).status).toBe(200)
    const outage = await call('GET', '/lead-1', { access_token: 'page-1-token' })
    expect(outage.status).toBe(503)
    expect(outage.body.error).toMatchObject({
      code: 2,
      type: 'Other',
      message: 'Service temporarily unavailable',
    })
  })
})
