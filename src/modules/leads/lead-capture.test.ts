import { sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import type { TestApp } from '../../../test/helpers/app.js'
import {
  contactsOf,
  contactsWithEmail,
  expectHiddenFromOtherAccounts,
  type Tenant,
} from '../../../test/helpers/fixtures.js'
import { eventually, makeJobsDue, waitingJobStarts } from '../../../test/helpers/jobs.js'
import {
  emailFor,
  fetchesOf,
  graphId,
  graphLead,
  type LeadsPage,
  leadEvent,
  leadsEnv,
  seller,
  signedLeadPost,
  storedLead,
  storedTokens,
  storeLeadsToken,
} from '../../../test/helpers/leads.js'
import {
  expectCappedTotal,
  expectCursorWalk,
  expectListRefusals,
  walkWithCursors,
} from '../../../test/helpers/lists.js'
import { randomText } from '../../../test/helpers/long-strings.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { LIST_TOTAL_CAP } from '../../platform/db/page.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { CAPTURE_LEAD_JOB } from './jobs.js'
import { captureBackoffMs, MAX_CAPTURE_ATTEMPTS } from './lead-capture.service.js'

test.override('appEnv', ({ graph }) => leadsEnv(graph.url))

/** What the service announced (the app webhook's changes), as apps hear it. */
const announced: RecordChange[] = []
test.beforeAll(({ t }) => {
  t.app.platform.changes.listen(async (_tx, change) => {
    announced.push(change)
  })
})

/** Meta's event for the lead, signed and posted. */
async function deliver(t: TestApp, page: LeadsPage, leadgenId: string, createdTime?: Date) {
  const change = { leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }
  const event = leadEvent([
    createdTime ? { ...change, created_time: Math.floor(createdTime.getTime() / 1000) } : change,
  ])
  const response = await t.app.inject(signedLeadPost(event))
  expect(response.body).toBe('EVENT_RECEIVED')
}

const listLeads = (t: TestApp, tenant: Tenant, campaignId: string, query = '') =>
  t.app.inject({ url: `/v1/e/socialnet/campaigns/${campaignId}/leads?${query}`, headers: tenant.headers })

const leadReaches = (t: TestApp, leadgenId: string, expected: Record<string, unknown>) =>
  eventually(async () => expect(await storedLead(t, leadgenId)).toMatchObject(expected))

/** The lead's capture jobs: when each waiting one is due, or made due now (no sleeping). */
const capturesOf = (leadId: string) => ({ name: CAPTURE_LEAD_JOB, field: 'lead_id', value: leadId })

/** The account's live token record, as stored. */
const liveToken = async (t: TestApp, tenant: Tenant) =>
  (await storedTokens(t, tenant.accountId)).find((token) => token.deleted === null)

describe('GET /v1/e/socialnet/campaigns/:id/leads', () => {
  test('lists the leads newest first, paginated, by status and created_time; also of a deleted campaign', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const hour = 3_600_000
    const now = Date.now()
    const times = [4, 3, 2, 1].map((hours) => new Date(now - hours * hour))
    const ids = [
      graphLead(graph, page, { full_name: 'No Contact Details', city: 'Nowhere' }),
      ...[1, 2, 3].map((n) =>
        graphLead(graph, page, { full_name: `Lead ${n}`, email: emailFor(`lead${n}`) }),
      ),
    ]
    for (const [i, id] of ids.entries()) await deliver(t, page, id, times[i])
    for (const id of ids.slice(1)) await leadReaches(t, id, { status: 'captured' })
    await leadReaches(t, ids[0] as string, { status: 'failed', reason: 'no_contact_details' })

    const first = await listLeads(t, owner, page.campaignId, 'limit=2')
    expect(first.statusCode).toBe(200)
    expect(first.json().pagination).toEqual({ total: 4, page: 1, limit: 2, pages: 2 })
    expect(first.json().data.map((lead: { leadgen_id: string }) => lead.leadgen_id)).toEqual([ids[3], ids[2]])
    const second = (await listLeads(t, owner, page.campaignId, 'limit=2&page=2')).json()
    expect(second.data.map((lead: { leadgen_id: string }) => lead.leadgen_id)).toEqual([ids[1], ids[0]])
    expect(second.data[1]).toMatchObject({
      created_time: (times[0] as Date).toISOString().replace(/\.\d{3}Z$/, '.000Z'),
      status: 'failed',
      reason: 'no_contact_details',
      contact_id: null,
      captured_at: null,
    })

    const between = (query: string) =>
      listLeads(t, owner, page.campaignId, query).then((response) =>
        response.json().data.map((lead: { leadgen_id: string }) => lead.leadgen_id),
      )
    const at = (hours: number) => encodeURIComponent(new Date(now - hours * hour - 60_000).toISOString())
    expect(await between(`from=${at(2)}`)).toEqual([ids[3], ids[2]])
    expect(await between(`to=${at(2)}`)).toEqual([ids[1], ids[0]])
    expect(await between(`from=${at(3)}&to=${at(2)}`)).toEqual([ids[1]])
    expect(await between('status=failed')).toEqual([ids[0]])
    expect(await between('status=captured&limit=1')).toEqual([ids[3]])

    const deleted = await t.app.inject({
      method: 'DELETE',
      url: `/v1/e/socialnet/campaigns/${page.campaignId}`,
      headers: owner.headers,
    })
    expect(deleted.statusCode).toBe(200)
    expect((await listLeads(t, owner, page.campaignId)).json().pagination.total).toBe(4)
  })

  test('walks the leads with cursors, a filter kept; counts up to the cap', async ({ t, graph, owner }) => {
    const page = await seller(t, graph, owner)
    // Pairs share a microsecond-precise created_time; every third failed.
    const insert = (
      prefix: string,
      count: number,
      createdTime = sql`timestamptz '2025-01-01' + (n / 2) * interval '1.2345 ms'`,
    ) =>
      t.app.platform.db.execute(sql`insert into leads
          (id, leadgen_id, page_id, form_id, account_id, campaign_id, status, source, created_time)
        select ${prefix} || lpad(to_hex(n), 20, '0'), ${prefix} || '-' || n, ${page.pageId}, ${page.formId},
          ${owner.accountId}, ${page.campaignId},
          case when n % 3 = 0 then 'failed' else 'captured' end, 'webhook', ${createdTime}
        from generate_series(1, ${count}::int) as n`)
    await insert('00e0', 20)
    const newestFirst = Array.from({ length: 20 }, (_, i) => 20 - i)
    const idOf = (n: number) => `00e0${n.toString(16).padStart(20, '0')}`
    const url = `/v1/e/socialnet/campaigns/${page.campaignId}/leads`
    await expectCursorWalk(t.app, url, owner.headers, newestFirst.map(idOf), async () => {
      await insert('00e2', 1, sql`now()`)
    })
    expect(await walkWithCursors(t.app, `${url}?status=failed`, owner.headers, 2)).toEqual(
      newestFirst.filter((n) => n % 3 === 0).map(idOf),
    )
    await expectListRefusals(t.app, url, owner.headers, 100)
    await insert('00e1', LIST_TOTAL_CAP)
    await expectCappedTotal(t.app, url, owner.headers, 100)
  })

  test('refuses bad filters with 400 naming them', async ({ t, graph, owner }) => {
    const page = await seller(t, graph, owner)
    const bad = await listLeads(t, owner, page.campaignId, 'from=yesterday')
    expect(bad.statusCode).toBe(400)
    expect(bad.json().message).toContain('from')
    const reversed = await listLeads(
      t,
      owner,
      page.campaignId,
      'from=2024-02-01T00:00:00Z&to=2024-01-01T00:00:00Z',
    )
    expect(reversed.statusCode).toBe(400)
    expect(reversed.json().message).toBe('from must not be after to')
    expect((await listLeads(t, owner, page.campaignId, 'status=lost')).json().message).toContain('status')
  })

  test("is hidden from other accounts (404), and answers 404 for a campaign that doesn't exist", async ({
    t,
    graph,
    owner,
    stranger,
  }) => {
    const page = await seller(t, graph, owner)
    const call = {
      method: 'GET' as const,
      url: `/v1/integrations/socialnet/campaigns/${page.campaignId}/leads`,
    }
    await expectHiddenFromOtherAccounts(t.app, call, owner, stranger)
    const missing = await listLeads(t, owner, '0123456789abcdef01234567')
    expect(missing.statusCode).toBe(404)
    expect(missing.json().message).toBe('Campaign not found')
  })
})

describe('lead capture', () => {
  test('tells the account lead.created with the lead, and contact.created with its contact', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const email = emailFor('announced')
    const leadgenId = graphLead(graph, page, { full_name: 'Announced Lead', email })
    await deliver(t, page, leadgenId)
    await leadReaches(t, leadgenId, { status: 'captured' })
    const [contact] = await contactsWithEmail(t.app, owner, email)
    const created = announced.filter(
      (change) =>
        change.event === 'lead.created' && (change.data as { leadgen_id?: string }).leadgen_id === leadgenId,
    )
    expect(created).toEqual([
      expect.objectContaining({
        account_id: owner.accountId,
        data: expect.objectContaining({
          campaign_id: page.campaignId,
          status: 'captured',
          contact_id: contact?._id,
          fields: { full_name: 'Announced Lead', email },
        }),
      }),
    ])
    expect(announced).toContainEqual(
      expect.objectContaining({ event: 'contact.created', data: expect.objectContaining({ email }) }),
    )
  })

  // A 3,000-character address from Meta failed each capture on the contacts' unique index.
  test('captures a lead whose email is longer than SMTP carries by its phone', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const phone = `+1 555 ${graphId()}`
    const email = `${randomText(3_000)}@example.com`
    const leadgenId = graphLead(graph, page, { full_name: 'Long Email', email, phone_number: phone })
    await deliver(t, page, leadgenId)
    await leadReaches(t, leadgenId, { status: 'captured' })
    const contacts = (await contactsOf(t.app, owner)).filter((contact) => contact.phone === phone)
    expect(contacts).toMatchObject([{ email: null, name: 'Long Email' }])
  })

  test('a lead arriving while Graph refuses the token (190) waits as token_invalid; a new token captures it', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    // The session was invalidated: Meta refuses the user token and the page token read with it.
    graph.revokeToken(page.userToken)
    graph.revokeToken(page.pageToken)
    const email = emailFor('waiting')
    const leadgenId = graphLead(graph, page, { full_name: 'Waiting Lead', email })
    await deliver(t, page, leadgenId)
    await leadReaches(t, leadgenId, { status: 'failed', reason: 'token_invalid', attempts: 0 })
    expect(await liveToken(t, owner)).toMatchObject({ status: 'invalid', invalidReason: expect.any(String) })
    expect(announced).toContainEqual(
      expect.objectContaining({ event: 'socialnet.token_invalid', account_id: owner.accountId }),
    )
    expect(await contactsWithEmail(t.app, owner, email)).toHaveLength(0)
    const lead = await storedLead(t, leadgenId)
    expect(await waitingJobStarts(t, capturesOf(lead.id))).toEqual([])

    graph.addUser('EAAuser-reconnected', { [page.pageId]: 'EAApage-reconnected' })
    await storeLeadsToken(t, owner, 'EAAuser-reconnected')
    await leadReaches(t, leadgenId, { status: 'captured', reason: null })
    expect(await contactsWithEmail(t.app, owner, email)).toHaveLength(1)
    expect(await liveToken(t, owner)).toMatchObject({ status: 'valid' })
  })

  test('a lead of an account with no stored token waits as token_missing; storing one captures it', async ({
    t,
    graph,
    bystander,
  }) => {
    const page = await seller(t, graph, bystander, { connected: false })
    const email = emailFor('unconnected')
    const leadgenId = graphLead(graph, page, { full_name: 'Unconnected', email })
    await deliver(t, page, leadgenId)
    await leadReaches(t, leadgenId, { status: 'failed', reason: 'token_missing' })
    expect(fetchesOf(graph, leadgenId)).toHaveLength(0)
    await storeLeadsToken(t, bystander, page.userToken)
    await leadReaches(t, leadgenId, { status: 'captured' })
    expect(await contactsWithEmail(t.app, bystander, email)).toHaveLength(1)
  })

  test("a throttled fetch is retried when Graph's estimated_time_to_regain_access says, else with backoff", async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    for (const [estimatedMinutes, delayMs] of [
      [2, 120_000],
      [undefined, captureBackoffMs(1)],
    ] as const) {
      const email = emailFor('throttled')
      const leadgenId = graphLead(graph, page, { full_name: 'Throttled Lead', email })
      graph.throttleNext(1, { estimatedMinutes })
      const before = Date.now()
      await deliver(t, page, leadgenId)
      await leadReaches(t, leadgenId, { status: 'failed', reason: 'throttled', attempts: 1 })
      const lead = await storedLead(t, leadgenId)
      const [due, ...more] = await waitingJobStarts(t, capturesOf(lead.id))
      expect(more).toEqual([])
      // The retry names the lead's account, as every capture job does: the capture's queries filter on it.
      const ofAccount = { name: CAPTURE_LEAD_JOB, field: 'account_id', value: owner.accountId }
      expect(await waitingJobStarts(t, ofAccount)).toEqual([due])
      expect(due?.getTime()).toBeGreaterThanOrEqual(before + delayMs - 1_000)
      expect(due?.getTime()).toBeLessThanOrEqual(Date.now() + delayMs + 1_000)

      await makeJobsDue(t, capturesOf(lead.id))
      await leadReaches(t, leadgenId, { status: 'captured', reason: null })
      expect(await contactsWithEmail(t.app, owner, email)).toHaveLength(1)
    }
  })

  test('a lead whose fetch keeps failing is tried a bounded number of times, with growing delays, and stays failed', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const leadgenId = graphLead(graph, page, { full_name: 'Never Fetched', email: emailFor('never') })
    const failure = {
      code: 100,
      type: 'GraphMethodException',
      message: `(#100) Lead ${leadgenId} is unavailable`,
    }
    for (let i = 0; i < MAX_CAPTURE_ATTEMPTS + 1; i++) graph.failNext(`/${leadgenId}`, failure)
    await deliver(t, page, leadgenId)
    const reason = `fetch_failed: ${failure.message}`
    for (let attempt = 1; attempt <= MAX_CAPTURE_ATTEMPTS; attempt++) {
      await leadReaches(t, leadgenId, { status: 'failed', reason, attempts: attempt })
      const lead = await storedLead(t, leadgenId)
      if (attempt === MAX_CAPTURE_ATTEMPTS) break
      const [due] = await eventually(async () => {
        const waiting = await waitingJobStarts(t, capturesOf(lead.id))
        expect(waiting).toHaveLength(1)
        return waiting
      })
      const delay = (due as Date).getTime() - lead.updatedAt.getTime()
      expect(Math.abs(delay - captureBackoffMs(attempt))).toBeLessThan(2_000)
      await makeJobsDue(t, capturesOf(lead.id))
    }
    const lead = await storedLead(t, leadgenId)
    expect(await waitingJobStarts(t, capturesOf(lead.id))).toEqual([])
    expect(fetchesOf(graph, leadgenId)).toHaveLength(MAX_CAPTURE_ATTEMPTS)
    const listed = (await listLeads(t, owner, page.campaignId, 'status=failed')).json().data
    expect(listed).toContainEqual(
      expect.objectContaining({ leadgen_id: leadgenId, status: 'failed', reason }),
    )
  })
})
