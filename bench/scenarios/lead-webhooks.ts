import { randomBytes, randomInt } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { type FakeGraphApi, startFakeGraphApi } from '../../test/fakes/graph-api.js'
import { leadEvent, signedLeadPost } from '../../test/helpers/leads.js'
import { createMember } from '../admin.js'
import { registerStop } from '../children.js'
import { type EachRequest, postEach, type SentEach } from '../each.js'
import { loadAverage } from '../machine.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'

const WEBHOOK_PATH = '/webhooks/socialnet/leads'
const EVENT_RECEIVED = 'EVENT_RECEIVED'
const DEFAULT_EVENTS = 10_000
// Untimed posts first, captured before the clock starts: V8 has optimised both paths and the pools are open.
const WARMUP = 1_000
const ACCOUNTS = 4
// Pages (one lead form and one campaign each) round the accounts: page k belongs to account k % ACCOUNTS.
const PAGES = 8
// Meta batches: every 10th new event carries three leads, two on its page and one on the next (two entries).
const SEVERAL_EVERY = 10
// Meta redelivers: every 25th post repeats, byte for byte, the post sent 11 before it (likely still in
// flight: two deliveries at once), which is every other time an event with three leads.
const REDELIVER_EVERY = 25
const REDELIVER_LAG = 11
const TARGET_PER_SECOND = 2_000
const TARGET_P99_MS = 50
const POLL_MS = 200
// Filing and capture that move nothing forward for this long have stopped: the run fails instead of waiting on.
const STALL_MS = 60_000
const CAMPAIGN_SYNC_TIMEOUT_MS = 60_000

// Graph ids are digits; this run's are told apart by a prefix of its own.
const RUN = String(randomInt(100_000, 1_000_000))
const APP = {
  appId: `1${RUN}`,
  appSecret: randomBytes(16).toString('hex'),
  verifyToken: randomBytes(16).toString('hex'),
}

/** Meta's Graph API (test/fakes), started before the server, which is given its URL. */
let graph: FakeGraphApi | undefined
async function startGraph(): Promise<Record<string, string>> {
  const fake = await startFakeGraphApi({ appId: APP.appId, appSecret: APP.appSecret })
  graph = fake
  registerStop(() => fake.close())
  return {
    SOCIALNET_APP_ID: APP.appId,
    SOCIALNET_APP_SECRET: APP.appSecret,
    SOCIALNET_VERIFY_TOKEN: APP.verifyToken,
    GRAPH_API_URL: fake.url,
  }
}

interface Page {
  pageId: string
  formId: string
  accountIndex: number
}
const pages: Page[] = Array.from({ length: PAGES }, (_, k) => ({
  pageId: `2${RUN}${String(k).padStart(3, '0')}`,
  formId: `3${RUN}${String(k).padStart(3, '0')}`,
  accountIndex: k % ACCOUNTS,
}))

/** What a user does: an account, its Meta token stored, a campaign for each of its pages' lead form. */
async function connectedAccount(target: Target, fake: FakeGraphApi, index: number) {
  const member = await createMember(target)
  const call = async (path: string, body: object) => {
    const response = await fetch(new URL(path, target.baseUrl), {
      method: 'POST',
      headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    const text = await response.text()
    if (response.status !== 201) throw new Error(`POST ${path} answered ${response.status}: ${text}`)
    return (JSON.parse(text) as { data: { _id: string } }).data
  }
  const own = pages.filter((page) => page.accountIndex === index)
  const userToken = `bench-user-${RUN}-${index}`
  fake.addUser(userToken, Object.fromEntries(own.map((page) => [page.pageId, `bench-page-${page.pageId}`])))
  for (const page of own) fake.addForm(page.pageId, { id: page.formId, name: `Bench form ${page.formId}` })
  await call('/v1/e/socialnet/auth/token', {
    source: 'socialnet-leads',
    access_token: userToken,
    expires_in: 5_184_000,
  })
  const campaignIds: string[] = []
  for (const page of own)
    campaignIds.push(
      (await call('/v1/e/socialnet/campaigns', { page_id: page.pageId, form_id: page.formId }))._id,
    )
  return { accountId: member.accountId, campaignIds }
}

/** Waits for each campaign's first sync (queued when it is created), which must find the forms still empty. */
async function untilSynced(db: pg.Pool, campaignIds: string[]): Promise<void> {
  const deadline = performance.now() + CAMPAIGN_SYNC_TIMEOUT_MS
  for (;;) {
    const { rows } = await db.query<{ synced: string }>(
      'select count(*) as synced from lead_campaigns where id = any($1) and synced_at is not null',
      [campaignIds],
    )
    if (Number(rows[0]?.synced) === campaignIds.length) return
    if (performance.now() > deadline) throw new Error('the campaigns were not synced within 60 s of creation')
    await delay(POLL_MS)
  }
}

/** The accounts, connected, their campaigns' first syncs done; their ids. */
async function connectedAccounts(target: Target, fake: FakeGraphApi, db: pg.Pool): Promise<string[]> {
  const accounts = await Promise.all(
    Array.from({ length: ACCOUNTS }, (_, index) => connectedAccount(target, fake, index)),
  )
  await untilSynced(
    db,
    accounts.flatMap((account) => account.campaignIds),
  )
  return accounts.map((account) => account.accountId)
}

interface Expected {
  email: string
  accountId: string
}

/**
 * Lead events as Meta posts them, signed with the app secret; each new lead added to the fake first, with a
 * distinct email, so that its capture can fetch it. Posts are numbered across the run (warm-up and timed).
 */
function leadPosts(fake: FakeGraphApi, accountIds: string[]) {
  const sent: EachRequest[] = []
  const expected = new Map<string, Expected>()
  const newLead = (page: Page) => {
    const n = expected.size
    const leadgenId = `4${RUN}${String(n).padStart(8, '0')}`
    const email = `lead-${RUN}-${n}@bench.example`
    fake.addLead(page.formId, {
      id: leadgenId,
      created_time: new Date(),
      field_data: [
        { name: 'email', values: [email] },
        { name: 'full_name', values: [`Bench Lead ${n}`] },
      ],
    })
    expected.set(leadgenId, { email, accountId: accountIds[page.accountIndex] as string })
    return { leadgen_id: leadgenId, page_id: page.pageId, form_id: page.formId }
  }
  const newPost = (n: number): EachRequest => {
    const page = pages[n % PAGES] as Page
    const changes = [newLead(page)]
    if (n % SEVERAL_EVERY === 3) changes.push(newLead(page), newLead(pages[(n + 1) % PAGES] as Page))
    const { headers, payload } = signedLeadPost(leadEvent(changes), APP.appSecret)
    return { headers, body: payload }
  }
  return {
    expected,
    posts(count: number): EachRequest[] {
      const batch: EachRequest[] = []
      for (let i = 0; i < count; i++) {
        const n = sent.length
        const earlier = sent[n - REDELIVER_LAG]
        const post = n % REDELIVER_EVERY === REDELIVER_EVERY - 1 && earlier ? earlier : newPost(n)
        sent.push(post)
        batch.push(post)
      }
      return batch
    },
  }
}

/** Events not filed yet and the run's leads captured: two index reads, cheap enough to poll. */
async function progress(db: pg.Pool, accountIds: string[]): Promise<{ unfiled: number; captured: number }> {
  const { rows } = await db.query<{ unfiled: string; captured: string }>(
    `select (select count(*) from lead_webhook_events where processed_at is null) as unfiled,
            (select count(*) from leads where account_id = any($1) and status = 'captured') as captured`,
    [accountIds],
  )
  return { unfiled: Number(rows[0]?.unfiled), captured: Number(rows[0]?.captured) }
}

/**
 * Waits until every event is filed and `leads` leads are captured; false when nothing moved for STALL_MS
 * before that.
 */
async function untilCaptured(db: pg.Pool, accountIds: string[], leads: number): Promise<boolean> {
  let last = await progress(db, accountIds)
  let progressAt = performance.now()
  while (last.unfiled > 0 || last.captured < leads) {
    if (performance.now() - progressAt > STALL_MS) return false
    await delay(POLL_MS)
    const now = await progress(db, accountIds)
    if (now.unfiled < last.unfiled || now.captured > last.captured) progressAt = performance.now()
    last = now
  }
  return true
}

async function contactsOf(db: pg.Pool, accountIds: string[]): Promise<number> {
  const { rows } = await db.query<{ contacts: string }>(
    'select count(*) as contacts from contacts where account_id = any($1)',
    [accountIds],
  )
  return Number(rows[0]?.contacts)
}

/** The run's events and leads, each lead compared with what was posted; once, after the capture. */
async function count(
  db: pg.Pool,
  accountIds: string[],
  expected: Map<string, Expected>,
  fake: FakeGraphApi,
  contactsBefore: number,
) {
  const events = await db.query<{ events: string; unfiled: string }>(
    'select count(*) as events, count(*) filter (where processed_at is null) as unfiled from lead_webhook_events',
  )
  // The database is the run's own: a lead no campaign claimed can only be one of the run's.
  const unclaimed = await db.query<{ unclaimed: string }>(
    'select count(*) as unclaimed from leads where account_id is null',
  )
  const { rows } = await db.query<{
    leadgen_id: string
    account_id: string
    status: string
    source: string
    contact_id: string | null
    email: string | null
    captured_at: Date | null
  }>(
    `select l.leadgen_id, l.account_id, l.status, l.source, l.contact_id, c.email, l.captured_at
       from leads l left join contacts c on c.id = l.contact_id and c.account_id = l.account_id
      where l.account_id = any($1)`,
    [accountIds],
  )
  const captured = rows.filter((row) => row.status === 'captured')
  const fetches = new Map<string, number>()
  for (const request of fake.requests) {
    const id = request.url.split('?')[0]?.split('/').pop() ?? ''
    if (request.method === 'GET' && expected.has(id)) fetches.set(id, (fetches.get(id) ?? 0) + 1)
  }
  return {
    events: Number(events.rows[0]?.events),
    unfiled: Number(events.rows[0]?.unfiled),
    stored: rows.length,
    distinct: new Set(rows.map((row) => row.leadgen_id)).size,
    unexpected: rows.filter((row) => !expected.has(row.leadgen_id)).length,
    unclaimed: Number(unclaimed.rows[0]?.unclaimed),
    fromSync: rows.filter((row) => row.source !== 'webhook').length,
    captured: captured.length,
    // Captured into the contact of its own email in its own account, or not.
    wrongContact: captured.filter((row) => {
      const wanted = expected.get(row.leadgen_id)
      return row.email !== wanted?.email || row.account_id !== wanted?.accountId
    }).length,
    contactsOfLeads: new Set(captured.map((row) => row.contact_id)).size,
    contactsCreated: (await contactsOf(db, accountIds)) - contactsBefore,
    fetchedTwice: [...fetches.values()].filter((times) => times > 1).length,
    lastCapturedAt: captured.reduce((last, row) => Math.max(last, row.captured_at?.getTime() ?? 0), 0),
  }
}
type Found = Awaited<ReturnType<typeof count>>

/** Every post stored and filed; every lead posted stored once, captured, into a contact of its own. */
const exact = (found: Found, posts: number, leads: number) =>
  found.events === posts &&
  found.unfiled === 0 &&
  found.stored === leads &&
  found.distinct === leads &&
  found.unexpected === 0 &&
  found.unclaimed === 0 &&
  found.captured === leads &&
  found.wrongContact === 0 &&
  found.contactsOfLeads === leads &&
  found.contactsCreated === leads

const bad = (sent: SentEach, expected: number) =>
  sent.errors > 0 ||
  sent.answers.length !== expected ||
  sent.answers.some((a) => a.status !== 200 || a.body !== EVENT_RECEIVED)

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  if (!target.databaseUrl) throw new Error('lead-webhooks needs the server on PostgreSQL (--postgres)')
  const fake = graph
  if (!fake) throw new Error('lead-webhooks: the fake Graph API was not started')
  const db = new pg.Pool({ connectionString: target.databaseUrl, max: 2 })
  try {
    const accountIds = await connectedAccounts(target, fake, db)
    const requested = options.requests ?? DEFAULT_EVENTS
    const url = new URL(WEBHOOK_PATH, target.baseUrl).toString()
    const posts = leadPosts(fake, accountIds)
    const post = (batch: EachRequest[]) =>
      postEach(url, 'application/json', batch, options.connections, { keepBodies: true })
    const contactsBefore = await contactsOf(db, accountIds)
    const loadBefore = loadAverage()
    const warm = await post(posts.posts(WARMUP))
    const warmLeads = posts.expected.size
    if (!(await untilCaptured(db, accountIds, warmLeads)))
      throw new Error(`the warm-up's ${warmLeads} leads were not all captured: capture stalled for 60 s`)
    const startedAt = Date.now()
    const sent = await post(posts.posts(requested))
    const timedLeads = posts.expected.size - warmLeads
    const finished = await untilCaptured(db, accountIds, posts.expected.size)
    const loadAfter = loadAverage()
    const found = await count(db, accountIds, posts.expected, fake, contactsBefore)
    const leads = posts.expected.size
    const failed = bad(warm, WARMUP) || bad(sent, requested) || !exact(found, WARMUP + requested, leads)
    const rate = requested / sent.seconds
    const captureSeconds = (found.lastCapturedAt - startedAt) / 1000
    const others = sent.answers.filter((a) => a.status !== 200).length
    const redelivered = Math.floor((WARMUP + requested) / REDELIVER_EVERY)
    return {
      passed: !failed && rate >= TARGET_PER_SECOND && sent.p99Ms < TARGET_P99_MS,
      failed,
      lines: [
        `${WARMUP} signed lead events untimed (their leads captured before the clock starts), then ${requested} timed, on ${options.connections} connections; ` +
          `${ACCOUNTS} accounts, ${PAGES} pages and campaigns; every ${SEVERAL_EVERY}th new event 3 leads on 2 pages, ` +
          `every ${REDELIVER_EVERY}th post a redelivery (${redelivered} in all); ${leads} distinct leads, ${timedLeads} in the timed events`,
        '',
        `acknowledged (200 ${EVENT_RECEIVED}: verified and stored; its filing queued just after): ${requested} in ${sent.seconds.toFixed(2)} s   ` +
          `${rate.toFixed(0)}/s   p50 ${sent.p50Ms.toFixed(1)} ms, p99 ${sent.p99Ms.toFixed(1)} ms   ` +
          `not 200: ${others}, connection errors ${sent.errors}   target >= ${TARGET_PER_SECOND}/s, p99 < ${TARGET_P99_MS} ms`,
        finished
          ? `acknowledged and captured (each lead filed, fetched from Graph, into its contact): ${(timedLeads / captureSeconds).toFixed(0)} leads/s ` +
            `over ${captureSeconds.toFixed(2)} s from the first timed post to the last capture`
          : `capture stalled: nothing filed or captured for ${STALL_MS / 1000} s`,
        '',
        `events stored ${found.events} of ${WARMUP + requested} posts, left unfiled ${found.unfiled}; leads stored ${found.stored} of ${leads} ` +
          `(distinct ${found.distinct}, not posted ${found.unexpected}, unclaimed ${found.unclaimed}, filed by the sync ${found.fromSync})`,
        `leads captured ${found.captured} of ${leads}, into a wrong contact ${found.wrongContact}; contacts of the leads ${found.contactsOfLeads}, ` +
          `contacts created ${found.contactsCreated}; leads fetched from Graph more than once ${found.fetchedTwice}`,
        `load average (1, 5, 15 min) before ${loadBefore}, after ${loadAfter}`,
      ],
    }
  } finally {
    await db.end()
  }
}

/** Meta's lead ads webhook: each signed lead event stored and acknowledged, then every lead captured once. */
export const leadWebhooks: MeasuredScenario = {
  description: `POST ${WEBHOOK_PATH}: signed Meta lead events, each lead fetched from Graph into one contact`,
  requiresPostgres: true,
  serverEnv: startGraph,
  measure,
}
