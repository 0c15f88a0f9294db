import { expect } from 'vitest'
import { startFakeGraphApi } from '../../../test/fakes/graph-api.js'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { createTenant, expectHiddenFromOtherAccounts, type Tenant } from '../../../test/helpers/fixtures.js'
import { LEADS_APP, leadsEnv } from '../../../test/helpers/leads.js'
import { inlineRefs } from '../../../test/helpers/openapi-document.js'
import { test } from '../../../test/helpers/tenant-test.js'

test.override('appEnv', ({ graph }) => leadsEnv(graph.url))

const PAGE_ID = '110220330440'
const PAGE_TOKEN = 'forms-page-token'
/** More forms than Graph's page of 100 the client asks for: the listing spans three of Graph's pages. */
const FORM_COUNT = 205
const formId = (index: number) => String(900_000_000_000 + index)

// Takes `t` so that the app is built in this hook (hook timeout), not within the first test's time.
test.beforeAll(async ({ graph, t }) => {
  expect(t.config.leads.graphApiUrl).toBe(graph.url)
  graph.addUser('forms-user-token', { [PAGE_ID]: PAGE_TOKEN })
  graph.addForm(PAGE_ID, {
    id: formId(0),
    name: 'Spring offer',
    status: 'ACTIVE',
    locale: 'fr_FR',
    questions: [
      { key: 'email', label: 'Email', type: 'EMAIL', id: '11' },
      { key: 'job_title', label: 'Job title', type: 'JOB_TITLE', id: '12' },
    ],
    privacy_policy: { url: 'https://example.com/privacy', link_text: 'Our privacy policy' },
    created_time: '2024-01-15T10:20:30+0000',
  })
  // Graph leaves out what a form lacks: no questions, no privacy policy, no locale, an odd time.
  graph.addForm(PAGE_ID, {
    id: formId(1),
    name: 'Bare form',
    questions: [],
    privacy_policy: undefined,
    locale: undefined,
    created_time: 'yesterday',
  })
  for (let index = 2; index < FORM_COUNT; index++)
    graph.addForm(PAGE_ID, { id: formId(index), name: `Form ${index}` })
})

const listForms = (
  t: TestApp,
  tenant: Tenant,
  query: Record<string, string>,
  { prefix = '/v1/e', pageId = PAGE_ID }: { prefix?: string; pageId?: string } = {},
) =>
  t.app.inject({
    url: `${prefix}/socialnet/accounts/${pageId}/leadforms?${new URLSearchParams(query)}`,
    headers: tenant.headers,
  })

test("lists every form of the page, following Graph's cursor to the end, in the spec's shape", async ({
  t,
  graph,
  owner,
}) => {
  const from = graph.requests.length
  const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN })

  expect(response.statusCode, response.body).toBe(200)
  const { success, message, data } = response.json()
  expect({ success, message }).toEqual({ success: true, message: 'SUCCESS' })
  expect(data.map((form: { id: string }) => form.id)).toEqual(
    Array.from({ length: FORM_COUNT }, (_, index) => formId(index)),
  )
  const listings = graph.requests.slice(from).filter((request) => request.url.includes('/leadgen_forms'))
  expect(listings).toHaveLength(3)
  expect(data[0]).toStrictEqual({
    id: formId(0),
    name: 'Spring offer',
    status: 'ACTIVE',
    locale: 'fr_FR',
    questions: [
      { key: 'email', label: 'Email', type: 'EMAIL' },
      { key: 'job_title', label: 'Job title', type: 'JOB_TITLE' },
    ],
    privacy_policy: { url: 'https://example.com/privacy', link_text: 'Our privacy policy' },
    created_time: '2024-01-15T10:20:30.000Z',
    page_id: PAGE_ID,
  })
  expect(data[1]).toStrictEqual({
    id: formId(1),
    name: 'Bare form',
    status: 'ACTIVE',
    locale: null,
    questions: [],
    privacy_policy: null,
    created_time: 'yesterday',
    page_id: PAGE_ID,
  })
  expect(data.every((form: { page_id: string }) => form.page_id === PAGE_ID)).toBe(true)
})

test('answers under /v1/integrations as well', async ({ t, owner }) => {
  const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN }, { prefix: '/v1/integrations' })
  expect(response.statusCode, response.body).toBe(200)
  expect(response.json().data).toHaveLength(FORM_COUNT)
})

test('without pageaccesstoken, or with an empty one: 400 naming it', async ({ t, graph, owner }) => {
  const from = graph.requests.length
  for (const query of [{}, { pageaccesstoken: '' }] as Record<string, string>[]) {
    const response = await listForms(t, owner, query)
    expect(response.statusCode).toBe(400)
    expect(response.json().message).toMatch(/^pageaccesstoken /)
  }
  expect(graph.requests.length).toBe(from)
})

test('a pageid that is not a Meta id: 400 naming it', async ({ t, owner }) => {
  const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN }, { pageId: 'my-page' })
  expect(response.statusCode).toBe(400)
  expect(response.json().message).toMatch(/^pageid /)
})

// Deliberate (docs/decisions.md): the spec shows the provider error object for an invalid page token and the
// shared envelope for every error; the answer satisfies both readings.
test("an invalid page token (unknown, revoked): the error envelope with Graph's message, and the provider error object {message, type, code} beside it and in additional_info", async ({
  t,
  graph,
  owner,
}) => {
  const unknown = await listForms(t, owner, { pageaccesstoken: 'not-a-token' })
  expect(unknown.statusCode).toBe(400)
  const message = 'Invalid OAuth access token - Cannot parse access token'
  expect(unknown.json()).toStrictEqual({
    success: false,
    errno: 400,
    message,
    type: 'OAuthException',
    code: 190,
    additional_info: { message, type: 'OAuthException', code: 190 },
  })

  graph.addUser('revoked-user-token', { '550660770880': 'revoked-page-token' })
  graph.revokeToken('revoked-page-token')
  const revoked = await listForms(
    t,
    owner,
    { pageaccesstoken: 'revoked-page-token' },
    { pageId: '550660770880' },
  )
  expect(revoked.statusCode).toBe(400)
  const body = revoked.json()
  const providerError = { message: body.message, type: 'OAuthException', code: 190 }
  expect(body).toStrictEqual({ success: false, errno: 400, ...providerError, additional_info: providerError })
  expect(body.message).toMatch(/session has been invalidated/)

  // Other refusals keep the shared envelope alone.
  const invalid = await listForms(t, owner, { pageaccesstoken: '' })
  expect(Object.keys(invalid.json()).sort()).toEqual(['additional_info', 'errno', 'message', 'success'])
  // The document says so: the 400 answer names type and code.
  const spec = (await t.app.inject({ url: '/docs/json' })).json()
  const documented = spec.paths['/v1/e/socialnet/accounts/{pageid}/leadforms'].get.responses['400']
  expect(JSON.stringify(inlineRefs(spec, documented))).toMatch(/"type".*"code"/)
})

test("account_id may name the caller's account or its sub-account; another account's is not found", async ({
  t,
  owner,
  subAccount,
  stranger,
}) => {
  for (const accountId of [owner.accountId, subAccount.accountId]) {
    const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN, account_id: accountId })
    expect(response.statusCode, response.body).toBe(200)
  }
  const ownersForms = {
    method: 'GET' as const,
    url: `/v1/e/socialnet/accounts/${PAGE_ID}/leadforms?${new URLSearchParams({ pageaccesstoken: PAGE_TOKEN, account_id: owner.accountId })}`,
  }
  await expectHiddenFromOtherAccounts(t.app, ownersForms, owner, stranger)
  for (const accountId of [stranger.accountId, '0123456789abcdef01234567']) {
    const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN, account_id: accountId })
    expect(response.statusCode).toBe(404)
    expect(response.json()).toMatchObject({ success: false, errno: 404 })
  }
  // A sub-account cannot reach up to its parent.
  const upwards = await listForms(t, subAccount, { pageaccesstoken: PAGE_TOKEN, account_id: owner.accountId })
  expect(upwards.statusCode).toBe(404)
})

test('an account_id that is not an id: 400 naming it', async ({ t, owner }) => {
  const response = await listForms(t, owner, { pageaccesstoken: PAGE_TOKEN, account_id: 'mine' })
  expect(response.statusCode).toBe(400)
  expect(response.json().message).toMatch(/^account_id /)
})

test('without a bearer token: 401', async ({ t }) => {
  const response = await t.app.inject({
    url: `/v1/e/socialnet/accounts/${PAGE_ID}/leadforms?pageaccesstoken=x`,
  })
  expect(response.statusCode).toBe(401)
})

// It builds an app of its own (its own database): the time that takes on a busy machine.
test('Graph unreachable: 502', { timeout: 90_000 }, async () => {
  const gone = await startFakeGraphApi({ appId: LEADS_APP.appId, appSecret: LEADS_APP.appSecret })
  await gone.close()
  const t = await buildTestApp(leadsEnv(gone.url))
  try {
    const tenant = await createTenant(t.app)
    const response = await listForms(t, tenant, { pageaccesstoken: PAGE_TOKEN })
    expect(response.statusCode).toBe(502)
    expect(response.json()).toMatchObject({ success: false, errno: 502 })
  } finally {
    await t.close()
  }
})
