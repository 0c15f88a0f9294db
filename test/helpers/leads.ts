import { createHmac, randomInt } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { expect } from 'vitest'
import { leads, socialnetTokens } from '../../src/modules/leads/tables.js'
import type { FakeGraphApi } from '../fakes/graph-api.js'
import type { TestApp } from './app.js'
import type { RouteCall, Tenant } from './fixtures.js'
import { jobsSettled } from './jobs.js'

/** The Meta app every leads test runs with. */
export const LEADS_APP = {
  appId: '1234567890',
  appSecret: 'leads-app-secret-0123456789abcdef',
  verifyToken: 'leads-verify-token',
} as const

/** The service's environment for a fake Graph API at `graphUrl`. */
export const leadsEnv = (graphUrl: string): Record<string, string> => ({
  SOCIALNET_APP_ID: LEADS_APP.appId,
  SOCIALNET_APP_SECRET: LEADS_APP.appSecret,
  SOCIALNET_VERIFY_TOKEN: LEADS_APP.verifyToken,
  GRAPH_API_URL: graphUrl,
})

/** `POST /v1/e/socialnet/auth/token` as the tenant: its connected Meta user token. */
export async function storeLeadsToken(
  t: TestApp,
  tenant: Tenant,
  accessToken: string,
  expiresIn = 5_184_000,
) {
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/e/socialnet/auth/token',
    headers: tenant.headers,
    payload: { source: 'socialnet-leads', access_token: accessToken, expires_in: expiresIn },
  })
  if (response.statusCode !== 201 && response.statusCode !== 200)
    throw new Error(`token answered ${response.statusCode}: ${response.body}`)
  return response.json().data
}

/** `POST /v1/e/socialnet/campaigns` as the tenant; the campaign's id. */
export async function createLeadCampaign(
  t: TestApp,
  tenant: Tenant,
  pageId: string,
  formId: string,
): Promise<string> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/e/socialnet/campaigns',
    headers: tenant.headers,
    payload: { page_id: pageId, form_id: formId },
  })
  if (response.statusCode !== 201)
    throw new Error(`campaign answered ${response.statusCode}: ${response.body}`)
  return response.json().data._id
}

/** Meta's lead event for these leads (one entry per page, one `leadgen` change per lead). */
export function leadEvent(
  changes: { leadgen_id: string; page_id: string; form_id: string; created_time?: number; ad_id?: string }[],
) {
  const pages = [...new Set(changes.map((change) => change.page_id))]
  const time = Math.floor(Date.now() / 1000)
  return {
    object: 'page',
    entry: pages.map((pageId) => ({
      id: pageId,
      time,
      changes: changes
        .filter((change) => change.page_id === pageId)
        .map((change) => ({ field: 'leadgen', value: { created_time: time, ...change } })),
    })),
  }
}

/** A lead event posted as Meta posts it: the raw body with `X-Hub-Signature` and `X-Hub-Signature-256`. */
export function signedLeadPost(body: object | string, appSecret: string = LEADS_APP.appSecret) {
  const payload = typeof body === 'string' ? body : JSON.stringify(body)
  const hmac = (algorithm: 'sha1' | 'sha256') =>
    createHmac(algorithm, appSecret).update(payload).digest('hex')
  return {
    method: 'POST' as const,
    url: '/webhooks/socialnet/leads',
    headers: {
      'content-type': 'application/json',
      'x-hub-signature': `sha1=${hmac('sha1')}`,
      'x-hub-signature-256': `sha256=${hmac('sha256')}`,
    },
    payload,
  }
}

let sequence = 0
/** A fresh Graph id: digits, as Meta's are. */
export const graphId = () => `${Date.now()}${++sequence}${randomInt(10)}`
export const emailFor = (name: string) => `${name}-${graphId()}@example.com`

/** Waits until no sync of the campaign is queued or running: its first one reads Graph too. */
export const campaignSyncSettled = (t: TestApp, campaignId: string) =>
  jobsSettled(t, 'campaign_id', campaignId)

/** A page and lead form of the tenant's, its Meta user and page tokens, and the campaign claiming them. */
export async function seller(
  t: TestApp,
  graph: FakeGraphApi,
  tenant: Tenant,
  options: { connected?: boolean } = {},
) {
  const pageId = graphId()
  const formId = graphId()
  const userToken = `EAAuser${pageId}`
  const pageToken = `EAApage${pageId}`
  graph.addUser(userToken, { [pageId]: pageToken })
  graph.addForm(pageId, { id: formId, name: 'Spring offer' })
  if (options.connected ?? true) await storeLeadsToken(t, tenant, userToken)
  const campaignId = await createLeadCampaign(t, tenant, pageId, formId)
  await campaignSyncSettled(t, campaignId)
  return { pageId, formId, userToken, pageToken, campaignId }
}

export type LeadsPage = Awaited<ReturnType<typeof seller>>

/** A lead Graph holds for the page's form; its id. */
export function graphLead(
  graph: FakeGraphApi,
  page: Pick<LeadsPage, 'formId'>,
  fields: Record<string, string>,
) {
  const id = graphId()
  const field_data = Object.entries(fields).map(([name, value]) => ({ name, values: [value] }))
  graph.addLead(page.formId, { id, created_time: new Date(), field_data })
  return id
}

/** The campaign as `GET /v1/e/socialnet/campaigns` lists it (deleted ones too). */
export async function campaignOf(t: TestApp, tenant: Tenant, campaignId: string) {
  const response = await t.app.inject({
    url: '/v1/e/socialnet/campaigns?include_deleted=true&limit=100',
    headers: tenant.headers,
  })
  expect(response.statusCode).toBe(200)
  return response.json().data.find((campaign: { _id: string }) => campaign._id === campaignId)
}

/** The campaign's leads (the newest 100) through `GET /v1/e/socialnet/campaigns/:id/leads`. */
export async function leadsOf(t: TestApp, tenant: Tenant, campaignId: string) {
  const response = await t.app.inject({
    url: `/v1/e/socialnet/campaigns/${campaignId}/leads?limit=100`,
    headers: tenant.headers,
  })
  expect(response.statusCode).toBe(200)
  return response.json().data as Record<string, unknown>[]
}

/** The lead stored for a `leadgen_id`, as the database holds it; throws while there is none. */
export async function storedLead(t: TestApp, leadgenId: string) {
  const [row] = await t.app.platform.db.select().from(leads).where(eq(leads.leadgenId, leadgenId))
  if (!row) throw new Error(`lead ${leadgenId} is not stored`)
  return row
}

/** Graph's requests for the lead itself (`GET /{leadgen-id}`). */
export const fetchesOf = (graph: FakeGraphApi, leadgenId: string) =>
  graph.requests.filter((request) => request.url.split('?')[0]?.endsWith(`/${leadgenId}`))

/** The account's token records as stored (sealed), deleted ones too, oldest first. */
export const storedTokens = (t: TestApp, accountId: string) =>
  t.app.platform.db
    .select()
    .from(socialnetTokens)
    .where(eq(socialnetTokens.accountId, accountId))
    .orderBy(socialnetTokens.createdAt)

/** What an account holds in the leads module: its campaigns as listed (deleted ones too), its tokens. */
async function leadsHeldBy(t: TestApp, tenant: Tenant) {
  const listed = await t.app.inject({
    url: '/v1/e/socialnet/campaigns?include_deleted=true&limit=100',
    headers: tenant.headers,
  })
  expect(listed.statusCode).toBe(200)
  return {
    campaigns: listed.json().data as { _id: string }[],
    tokens: await storedTokens(t, tenant.accountId),
  }
}

/**
 * Cross-account isolation for a leads route that names no resource of the owner's in its path (it acts on the
 * caller's own account: a token stored or disconnected, campaigns created or listed, a webhook registered
 * for a campaign id in the body), whose answer to another account is therefore not a 404: the stranger's
 * call answers without any of the owner's ids and leaves the owner's campaigns and tokens as they were.
 */
export async function expectUntouchedByOtherAccounts(
  t: TestApp,
  call: RouteCall,
  owner: Tenant,
  stranger: Tenant,
): Promise<void> {
  const before = await leadsHeldBy(t, owner)
  // An account with nothing to lose proves nothing.
  expect(before.campaigns.length, 'the owner holds a campaign').toBeGreaterThan(0)
  expect(before.tokens.length, 'the owner holds a token').toBeGreaterThan(0)
  const answer = await t.app.inject({ ...call, headers: stranger.headers })
  expect(answer.statusCode, `${call.method} ${call.url} as another account`).toBeLessThan(500)
  const ownerIds = [owner.accountId, ...before.campaigns.map((c) => c._id), ...before.tokens.map((r) => r.id)]
  for (const id of ownerIds) expect(answer.body, `${call.method} ${call.url} shows ${id}`).not.toContain(id)
  expect(await leadsHeldBy(t, owner)).toEqual(before)
}
