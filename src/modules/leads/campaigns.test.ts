import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import {
  anId,
  expectHiddenFromOtherAccounts,
  type RouteCall,
  type Tenant,
} from '../../../test/helpers/fixtures.js'
import { expectUntouchedByOtherAccounts, leadsEnv, seller } from '../../../test/helpers/leads.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { FORM_ALREADY_CLAIMED } from './campaigns.service.js'

test.override('appEnv', ({ graph }) => leadsEnv(graph.url))
// Built in a hook (hook timeout), not within the first test's time.
test.beforeAll(({ t, graph }) => expect(t.config.leads.graphApiUrl).toBe(graph.url))

let nextForm = 1000
/** A page and form no other test of the file uses. */
const freshForm = () => ({ page_id: '555000111', form_id: String(nextForm++) })

const create = (t: TestApp, tenant: Tenant, payload: object, prefix = '/v1/e') =>
  t.app.inject({ method: 'POST', url: `${prefix}/socialnet/campaigns`, headers: tenant.headers, payload })

const list = async (t: TestApp, tenant: Tenant, query = '') =>
  (await t.app.inject({ url: `/v1/e/socialnet/campaigns?${query}`, headers: tenant.headers })).json()

describe('lead campaigns', () => {
  test('creates a campaign with the spec fields and its subscription health', async ({ t, owner }) => {
    const form = freshForm()
    const response = await create(t, owner, form)
    expect(response.statusCode).toBe(201)
    expect(response.json()).toEqual({
      success: true,
      message: 'SUCCESS',
      data: {
        _id: anId,
        account_id: owner.accountId,
        integration: 'socialnet_ads',
        page_id: form.page_id,
        form_id: form.form_id,
        is_deleted: false,
        created_at: expect.any(String),
        subscription_status: 'unknown',
        subscription_error: null,
        subscription_checked_at: null,
        last_lead_at: null,
        synced_at: null,
      },
    })
  })

  test('gives a page and form to one live campaign across all accounts', async ({ t, owner, stranger }) => {
    const form = freshForm()
    expect((await create(t, owner, form)).statusCode).toBe(201)
    const taken = await create(t, stranger, form, '/v1/integrations')
    expect(taken.statusCode).toBe(409)
    expect(taken.json()).toEqual({ success: false, errno: 409, message: FORM_ALREADY_CLAIMED })
    expect((await create(t, owner, form)).statusCode).toBe(409)
  })

  test('frees the page and form once the campaign is deleted', async ({ t, owner, stranger }) => {
    const form = freshForm()
    const id = (await create(t, owner, form)).json().data._id
    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/v1/e/socialnet/campaigns/${id}`,
      headers: owner.headers,
    })
    expect(deleted.statusCode).toBe(200)
    expect(deleted.json().data).toMatchObject({ _id: id, is_deleted: true })
    expect((await create(t, stranger, form)).statusCode).toBe(201)
  })

  test('names the field of a bad body', async ({ t, owner }) => {
    for (const [payload, field] of [
      [{ form_id: '1' }, 'page_id'],
      [{ page_id: '1' }, 'form_id'],
      [{ page_id: 'page-1', form_id: '1' }, 'page_id'],
      [{ page_id: '1\u0000', form_id: '1' }, 'page_id'],
    ] as const) {
      const response = await create(t, owner, payload)
      expect(response.statusCode, JSON.stringify(payload)).toBe(400)
      expect(response.json().message).toContain(field)
    }
  })

  test('lists the live campaigns newest first, paginated; deleted ones on request', async ({
    t,
    bystander,
  }) => {
    const ids: string[] = []
    for (let i = 0; i < 3; i++) ids.push((await create(t, bystander, freshForm())).json().data._id)
    await t.app.inject({
      method: 'DELETE',
      url: `/v1/e/socialnet/campaigns/${ids[0]}`,
      headers: bystander.headers,
    })
    const live = await list(t, bystander)
    expect(live.data.map((campaign: { _id: string }) => campaign._id)).toEqual([ids[2], ids[1]])
    expect(live.pagination).toEqual({ total: 2, page: 1, limit: 20, pages: 1 })
    const paged = await list(t, bystander, 'include_deleted=true&limit=2&page=2')
    expect(paged.data.map((campaign: { _id: string }) => campaign._id)).toEqual([ids[0]])
    expect(paged.pagination).toEqual({ total: 3, page: 2, limit: 2, pages: 2 })
  })

  test("hides another account's campaigns: listed, created or deleted by another account", async ({
    t,
    graph,
    owner,
    stranger,
  }) => {
    const { pageId, formId, campaignId } = await seller(t, graph, owner)
    const calls: RouteCall[] = [
      { method: 'GET', url: '/v1/e/socialnet/campaigns?include_deleted=true&limit=100' },
      // The owner's page and form: 409 without a word of whose campaign holds them.
      { method: 'POST', url: '/v1/e/socialnet/campaigns', payload: { page_id: pageId, form_id: formId } },
      { method: 'POST', url: '/v1/integrations/socialnet/campaigns', payload: freshForm() },
    ]
    for (const call of calls) await expectUntouchedByOtherAccounts(t, call, owner, stranger)
    await expectHiddenFromOtherAccounts(
      t.app,
      { method: 'DELETE', url: `/v1/e/socialnet/campaigns/${campaignId}` },
      owner,
      stranger,
    )
  })

  test('answers 404 for a campaign that does not exist, 400 for a malformed id', async ({ t, owner }) => {
    const missing = await t.app.inject({
      method: 'DELETE',
      url: '/v1/e/socialnet/campaigns/0123456789abcdef01234567',
      headers: owner.headers,
    })
    expect(missing.json()).toEqual({ success: false, errno: 404, message: 'Campaign not found' })
    const malformed = await t.app.inject({
      method: 'DELETE',
      url: '/v1/e/socialnet/campaigns/nope',
      headers: owner.headers,
    })
    expect(malformed.statusCode).toBe(400)
  })

  test('needs a token', async ({ t }) => {
    expect((await t.app.inject({ url: '/v1/e/socialnet/campaigns' })).statusCode).toBe(401)
  })
})
