import { createHmac } from 'node:crypto'
import { count, sql } from 'drizzle-orm'
import { describe, expect } from 'vitest'
import { buildTestApp, type TestApp } from '../../../test/helpers/app.js'
import { contactsOf, contactsWithEmail, createTenant } from '../../../test/helpers/fixtures.js'
import { eventually, rowsOf } from '../../../test/helpers/jobs.js'
import {
  emailFor,
  fetchesOf,
  graphId,
  graphLead,
  LEADS_APP,
  leadEvent,
  leadsEnv,
  leadsOf,
  seller,
  signedLeadPost,
  storedLead,
} from '../../../test/helpers/leads.js'
import { removedInPlace } from '../../../test/helpers/removed-in-place.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { REQUEUE_LEAD_EVENTS_JOB } from './jobs.js'
import { leadWebhookEvents } from './tables.js'

test.override('appEnv', ({ graph }) => leadsEnv(graph.url))
// Built in a hook (hook timeout), not within the first test's time.
test.beforeAll(({ t, graph }) => expect(t.config.leads.graphApiUrl).toBe(graph.url))

const storedEventCount = async (t: TestApp) =>
  (await t.app.platform.db.select({ total: count() }).from(leadWebhookEvents))[0]?.total ?? 0

describe('GET /webhooks/socialnet/leads (verification)', () => {
  const verify = (t: TestApp, query: Record<string, string>) =>
    t.app.inject({ url: `/webhooks/socialnet/leads?${new URLSearchParams(query)}` })

  test('echoes hub.challenge as plain text for subscribe with our verify token', async ({ t }) => {
    const response = await verify(t, {
      'hub.mode': 'subscribe',
      'hub.verify_token': LEADS_APP.verifyToken,
      'hub.challenge': '1158201444',
    })
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain/)
    expect(response.body).toBe('1158201444')
  })

  test('answers 403 for a wrong or missing token, or another mode', async ({ t }) => {
    const queries: Record<string, string>[] = [
      { 'hub.mode': 'subscribe', 'hub.verify_token': 'not-ours', 'hub.challenge': '1' },
      { 'hub.mode': 'subscribe', 'hub.verify_token': `${LEADS_APP.verifyToken}x`, 'hub.challenge': '1' },
      { 'hub.mode': 'subscribe', 'hub.challenge': '1' },
      { 'hub.mode': 'unsubscribe', 'hub.verify_token': LEADS_APP.verifyToken, 'hub.challenge': '1' },
      {},
    ]
    for (const query of queries) {
      const response = await verify(t, query)
      expect(response.statusCode, JSON.stringify(query)).toBe(403)
      expect(response.json()).toMatchObject({ success: false, errno: 403 })
    }
  })

  test('refuses everything, verification and events, when the verify token and app secret are unset', async () => {
    const bare = await buildTestApp({})
    try {
      const verified = await verify(bare, {
        'hub.mode': 'subscribe',
        'hub.verify_token': '',
        'hub.challenge': '1',
      })
      expect(verified.statusCode).toBe(403)
      const event = leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }])
      expect((await bare.app.inject(signedLeadPost(event))).statusCode).toBe(403)
      expect(await storedEventCount(bare)).toBe(0)
    } finally {
      await bare.close()
    }
  })
})

describe('POST /webhooks/socialnet/leads', () => {
  test('refuses a missing or wrong signature with 403 and stores nothing', async ({ t }) => {
    const event = leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }])
    const signed = signedLeadPost(event)
    const before = await storedEventCount(t)
    const sha256Of = (body: string) =>
      `sha256=${createHmac('sha256', LEADS_APP.appSecret).update(body).digest('hex')}`
    for (const [name, refused] of Object.entries({
      unsigned: { ...signed, headers: { 'content-type': 'application/json' } },
      'only sha256, of another body': {
        ...signed,
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': sha256Of(`${signed.payload} `),
        },
      },
      'another secret': signedLeadPost(event, 'another-app-secret'),
      'body changed': { ...signed, payload: signed.payload.replace('"page"', '"user"') },
      'good sha1, wrong sha256': {
        ...signed,
        headers: { ...signed.headers, 'x-hub-signature-256': sha256Of(`${signed.payload} `) },
      },
      'sha1 cut short': { ...signed, headers: { ...signed.headers, 'x-hub-signature': 'sha1=00' } },
    })) {
      const response = await t.app.inject(refused)
      expect(response.statusCode, name).toBe(403)
      expect(response.json()).toMatchObject({ success: false, errno: 403 })
    }
    expect(await storedEventCount(t)).toBe(before)
  })

  test('answers 400 to a signed body that is not a JSON event, and takes a post without X-Hub-Signature-256', async ({
    t,
  }) => {
    const before = await storedEventCount(t)
    const broken = await t.app.inject(signedLeadPost('{"object":"page","entry":['))
    expect(broken.statusCode).toBe(400)
    expect(await storedEventCount(t)).toBe(before)

    const signed = signedLeadPost(
      leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }]),
    )
    const { 'x-hub-signature-256': _, ...sha1Only } = signed.headers
    const response = await t.app.inject({ ...signed, headers: sha1Only })
    expect(response.statusCode).toBe(200)
    expect(response.body).toBe('EVENT_RECEIVED')
    expect(await storedEventCount(t)).toBe(before + 1)
  })

  test('takes a post signed with X-Hub-Signature-256 alone, as Meta signs today', async ({ t }) => {
    const before = await storedEventCount(t)
    const signed = signedLeadPost(
      leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }]),
    )
    const { 'x-hub-signature': _, ...sha256Only } = signed.headers
    expect(sha256Only['x-hub-signature-256']).toMatch(/^sha256=[0-9a-f]{64}$/)
    const response = await t.app.inject({ ...signed, headers: sha256Only })
    expect(response.statusCode).toBe(200)
    expect(response.body).toBe('EVENT_RECEIVED')
    expect(await storedEventCount(t)).toBe(before + 1)
  })

  test("captures every lead of a real-format event (several entries and changes) into the owner's contacts", async ({
    t,
    graph,
    owner,
  }) => {
    const first = await seller(t, graph, owner)
    const second = await seller(t, graph, owner)
    const ada = {
      full_name: 'Ada Lovelace',
      EMAIL: emailFor('ada'),
      phone_number: '+15550000001',
      City: 'London',
    }
    const grace = {
      first_name: 'Grace',
      last_name: 'Hopper',
      work_email: emailFor('grace'),
      job_title: 'Rear admiral',
      favourite_language: 'COBOL',
    }
    const alan = { full_name: 'Alan Turing', phone_number: '+15550000003', zip_code: 'MK3 6EB' }
    const adaId = graphLead(graph, first, ada)
    const graceId = graphLead(graph, first, grace)
    const alanId = graphLead(graph, second, alan)
    const time = Math.floor(Date.now() / 1000)
    const change = (leadgenId: string | number, page: { pageId: string; formId: string }) => ({
      field: 'leadgen',
      value: {
        leadgen_id: leadgenId,
        page_id: page.pageId,
        form_id: page.formId,
        ad_id: '0',
        created_time: time,
      },
    })
    const event = {
      object: 'page',
      entry: [
        {
          id: first.pageId,
          time,
          changes: [
            change(adaId, first),
            { field: 'feed', value: { item: 'status' } },
            change(graceId, first),
          ],
        },
        // Ids as JSON numbers, as some deliveries carry them.
        { id: Number(second.pageId), time, changes: [change(Number(alanId), second)] },
      ],
    }
    const response = await t.app.inject(signedLeadPost(event))
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^text\/plain/)
    expect(response.body).toBe('EVENT_RECEIVED')

    await eventually(async () => {
      const listed = [
        ...(await leadsOf(t, owner, first.campaignId)),
        ...(await leadsOf(t, owner, second.campaignId)),
      ]
      expect(listed.map((lead) => [lead.leadgen_id, lead.status]).sort()).toEqual(
        [adaId, graceId, alanId].map((id) => [id, 'captured']).sort(),
      )
    })
    const [adaLead] = (await leadsOf(t, owner, first.campaignId)).filter((lead) => lead.leadgen_id === adaId)
    expect(adaLead).toMatchObject({
      campaign_id: first.campaignId,
      page_id: first.pageId,
      form_id: first.formId,
      source: 'webhook',
      reason: null,
      fields: { full_name: 'Ada Lovelace', email: ada.EMAIL, phone_number: '+15550000001', city: 'London' },
      field_data: Object.entries(ada).map(([name, value]) => ({ name, values: [value] })),
    })
    const contacts = await contactsOf(t.app, owner)
    const adaContact = contacts.find((contact) => contact.email === ada.EMAIL)
    expect(adaContact).toMatchObject({ name: 'Ada Lovelace', phone: '+15550000001' })
    expect(adaLead?.contact_id).toBe(adaContact?._id)
    expect(contacts.find((contact) => contact.email === grace.work_email)).toMatchObject({
      name: 'Grace Hopper',
    })
    expect(contacts.find((contact) => contact.phone === alan.phone_number)).toMatchObject({
      name: 'Alan Turing',
    })
    const [graceLead] = (await leadsOf(t, owner, first.campaignId)).filter(
      (lead) => lead.leadgen_id === graceId,
    )
    expect(graceLead?.fields).toEqual({
      first_name: 'Grace',
      last_name: 'Hopper',
      work_email: grace.work_email,
      job_title: 'Rear admiral',
    })
    expect(graceLead?.field_data).toContainEqual({ name: 'favourite_language', values: ['COBOL'] })
  })

  test('a redelivered event and two deliveries at once file one lead and one contact', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const redelivered = emailFor('redelivered')
    const redeliveredId = graphLead(graph, page, { full_name: 'Once Only', email: redelivered })
    const post = signedLeadPost(
      leadEvent([{ leadgen_id: redeliveredId, page_id: page.pageId, form_id: page.formId }]),
    )
    expect((await t.app.inject(post)).body).toBe('EVENT_RECEIVED')
    await eventually(async () => expect((await storedLead(t, redeliveredId)).status).toBe('captured'))
    expect((await t.app.inject(post)).body).toBe('EVENT_RECEIVED')

    const concurrent = emailFor('concurrent')
    const concurrentId = graphLead(graph, page, { full_name: 'Twice At Once', email: concurrent })
    const twice = signedLeadPost(
      leadEvent([{ leadgen_id: concurrentId, page_id: page.pageId, form_id: page.formId }]),
    )
    const answers = await Promise.all([t.app.inject(twice), t.app.inject(twice)])
    expect(answers.map((answer) => answer.body)).toEqual(['EVENT_RECEIVED', 'EVENT_RECEIVED'])

    // Every stored event filed (the redelivery's and both concurrent ones), then one of each.
    await eventually(async () => {
      const unprocessed = await t.app.platform.db.execute(
        sql`select 1 from lead_webhook_events where processed_at is null`,
      )
      expect(rowsOf(unprocessed)).toHaveLength(0)
      expect((await storedLead(t, concurrentId)).status).toBe('captured')
    })
    for (const [leadgenId, email] of [
      [redeliveredId, redelivered],
      [concurrentId, concurrent],
    ] as const) {
      expect(
        (await leadsOf(t, owner, page.campaignId)).filter((lead) => lead.leadgen_id === leadgenId),
      ).toHaveLength(1)
      expect(await contactsWithEmail(t.app, owner, email)).toHaveLength(1)
      expect(fetchesOf(graph, leadgenId)).toHaveLength(1)
    }
  })

  test('keeps a lead of a page and form no campaign claims as unclaimed (a created_time no date holds: now), fetching nothing', async ({
    t,
    graph,
    owner,
  }) => {
    const leadgenId = graphId()
    const contactsBefore = (await contactsOf(t.app, owner)).length
    const post = signedLeadPost(
      leadEvent([
        { leadgen_id: leadgenId, page_id: graphId(), form_id: graphId(), created_time: 99_999_999_999_999 },
      ]),
    )
    const posted = Date.now()
    expect((await t.app.inject(post)).statusCode).toBe(200)
    await eventually(async () =>
      expect(await storedLead(t, leadgenId)).toMatchObject({
        status: 'unclaimed',
        accountId: null,
        campaignId: null,
        contactId: null,
        source: 'webhook',
      }),
    )
    const { createdTime } = await storedLead(t, leadgenId)
    expect(createdTime.getTime()).toBeGreaterThanOrEqual(posted)
    expect(createdTime.getTime()).toBeLessThanOrEqual(Date.now())
    expect(fetchesOf(graph, leadgenId)).toHaveLength(0)
    expect(await contactsOf(t.app, owner)).toHaveLength(contactsBefore)
  })

  test('keeps a lead of a removed account’s page and form as unclaimed, as no campaign’s, from its DELETE on', async ({
    t,
    graph,
  }) => {
    const leaving = await createTenant(t.app, { name: 'Leaving' })
    const page = await seller(t, graph, leaving)
    const leadgenId = graphLead(graph, page, { full_name: 'Ada Visitor', email: emailFor('removed') })
    await removedInPlace(t, leaving.accountId)

    const post = signedLeadPost(
      leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }]),
    )
    expect((await t.app.inject(post)).statusCode).toBe(200)
    await eventually(async () =>
      expect(await storedLead(t, leadgenId)).toMatchObject({
        status: 'unclaimed',
        accountId: null,
        campaignId: null,
        contactId: null,
      }),
    )
    expect(fetchesOf(graph, leadgenId)).toHaveLength(0)
  })

  test('stores a signed event holding NUL characters (replaced), and files its lead', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const leadgenId = graphLead(graph, page, {
      full_name: 'Nul Free',
      email: emailFor('nul'),
    })
    const event = leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }])
    const response = await t.app.inject(signedLeadPost({ ...event, note: 'a\u0000b' }))
    expect(response.statusCode).toBe(200)
    await eventually(async () => expect((await storedLead(t, leadgenId)).status).toBe('captured'))
  })

  test('answers 503 when the event cannot be stored, so that Meta delivers it again', async ({ t }) => {
    const { db } = t.app.platform
    const post = signedLeadPost(
      leadEvent([{ leadgen_id: graphId(), page_id: graphId(), form_id: graphId() }]),
    )
    // Every new row refused, as a database that cannot write would.
    await db.execute(
      sql`alter table lead_webhook_events add constraint refuse_events check (false) not valid`,
    )
    try {
      const refused = await t.app.inject(post)
      expect(refused.statusCode).toBe(503)
      expect(refused.json()).toMatchObject({ success: false, errno: 503 })
    } finally {
      await db.execute(sql`alter table lead_webhook_events drop constraint refuse_events`)
    }
    expect((await t.app.inject(post)).body).toBe('EVENT_RECEIVED')
  })

  test('an event stored without its job (the process stopped in between) is queued again and filed', async ({
    t,
    graph,
    owner,
  }) => {
    const page = await seller(t, graph, owner)
    const email = emailFor('lost-job')
    const leadgenId = graphLead(graph, page, { full_name: 'Lost Job', email })
    const payload = JSON.stringify(
      leadEvent([{ leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }]),
    )
    const { db, queue } = t.app.platform
    await db.execute(sql`
      insert into lead_webhook_events (id, payload, created_at)
      values ('0123456789abcdef01234567', ${payload}::jsonb, now() - interval '2 minutes')`)
    await queue.enqueue(db, REQUEUE_LEAD_EVENTS_JOB, {})
    await eventually(async () => expect((await storedLead(t, leadgenId)).status).toBe('captured'))
    expect(await contactsWithEmail(t.app, owner, email)).toHaveLength(1)
  })
})
