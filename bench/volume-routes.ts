import { randomBytes, randomInt } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { JOBS_SCHEMA } from '../src/platform/jobs/job-schema.js'
import { type FakeGraphApi, startFakeGraphApi } from '../test/fakes/graph-api.js'
import { type FakeSendgrid, startFakeSendgrid } from '../test/fakes/sendgrid.js'
import { leadEvent, signedLeadPost } from '../test/helpers/leads.js'
import { adminPost } from './admin.js'
import { registerStop } from './children.js'
import { UsageError } from './options.js'
import {
  type BenchRequest,
  type LoadOptions,
  type RequestChange,
  type Target,
  VIA_TLS_PROXY,
} from './scenario.js'
import {
  batchBody,
  serverEnv as deliveryEventsEnv,
  WEBHOOK_PATH as EVENTS_PATH,
  type SentRecord,
  signedHeaders,
} from './scenarios/delivery-events.js'
import { type Funnel, personOf, SUBMIT_PATH, submission } from './scenarios/form-submit.js'
import { insertCodes, registerApps, TOKEN_PATH } from './scenarios/oauth-token.js'
import {
  WEBHOOK_PATH as CHARGE_PATH,
  chargeEvent,
  serverEnv as stripeEnv,
} from './scenarios/review-webhooks.js'
import { LATEST, RETENTION_OFF_FOR_SEEDED_ROWS } from './seed-volume.js'
import { type RunningServer, startServer } from './servers.js'
import type { StartCommand } from './start-command.js'

/**
 * The routes `npm run bench:volume` measures on a seeded database (bench/seed-volume.ts), for its largest
 * account and a small one: each route's request for an account of one scale's server, with the ids it reads
 * picked by SQL (the busiest: the funnel with the most submissions, the link with the most clicks, ...), and
 * the fake providers and settings the writes need.
 */

export type AccountLabel = 'largest' | 'small'

/** An account of one scale's seeded database, and its main member (in every room) as a platform JWT. */
export interface VolumeAccount {
  label: AccountLabel
  name: string
  accountId: string
  userId: string
  email: string
  token: string
}

/** One scale's running server, its database and the two accounts the routes are sent for. */
export interface Scale {
  target: Target & { databaseUrl: string }
  db: pg.Pool
  providers: Providers
  accounts: VolumeAccount[]
  load: LoadOptions
}

/** A route measured for each of the two accounts. */
export interface AccountRoute {
  name: string
  /** Adds rows: measured after every read, each round followed by the jobs it queued (`jobsDone`). */
  writes?: boolean
  prepare(scale: Scale, account: VolumeAccount): Promise<BenchRequest>
}

/** A route of the operator, across every account. */
export interface OperatorRoute {
  name: string
  operator: true
  prepare(scale: Scale): Promise<BenchRequest>
}

export type VolumeRoute = AccountRoute | OperatorRoute

export const isOperatorRoute = (route: VolumeRoute): route is OperatorRoute => 'operator' in route

// Every request comes from 127.0.0.1 and each account has one user: the per-IP, per-user and per-client
// limits would answer 429 within seconds, so they are lifted for the run.
const LIFTED = '1000000000'
const SENDGRID_KEY = `SG.volume-${randomBytes(8).toString('hex')}`
const LEADS_APP = {
  appId: String(randomInt(1_000_000_000, 2_000_000_000)),
  appSecret: randomBytes(16).toString('hex'),
  verifyToken: randomBytes(16).toString('hex'),
}
/** A SendGrid event post of this many events (SendGrid's own hold up to about a thousand). */
export const DELIVERY_EVENTS_PER_POST = 100
/** The run's own ids: Graph's are digits, the others are told apart by it. */
const RUN = String(randomInt(100_000, 1_000_000))
/** The seeded year, which the statistics are asked for (the issue: a year's statistics). */
const YEAR_END = new Date(LATEST)
const YEAR_START = new Date(YEAR_END.getTime() - 365 * 86_400_000)

/** SendGrid and Meta's Graph API as both servers reach them, and what points the servers at them. */
export interface Providers {
  sendgrid: FakeSendgrid
  graph: FakeGraphApi
  env: Record<string, string>
}

export async function startProviders(): Promise<Providers> {
  const sendgrid = await startFakeSendgrid({ apiKeys: [SENDGRID_KEY] })
  registerStop(() => sendgrid.close())
  const graph = await startFakeGraphApi({ appId: LEADS_APP.appId, appSecret: LEADS_APP.appSecret })
  registerStop(() => graph.close())
  const env = {
    ...RETENTION_OFF_FOR_SEEDED_ROWS,
    ...deliveryEventsEnv,
    ...stripeEnv,
    SENDGRID_API_KEY: SENDGRID_KEY,
    SENDGRID_BASE_URL: sendgrid.url,
    SOCIALNET_APP_ID: LEADS_APP.appId,
    SOCIALNET_APP_SECRET: LEADS_APP.appSecret,
    SOCIALNET_VERIFY_TOKEN: LEADS_APP.verifyToken,
    GRAPH_API_URL: graph.url,
    RATE_LIMIT_ROOMS_PER_MINUTE: LIFTED,
    RATE_LIMIT_FORMS_PER_MINUTE: LIFTED,
    RATE_LIMIT_EMAIL_SEND_PER_MINUTE: LIFTED,
    RATE_LIMIT_OAUTH_TOKEN_PER_HOUR: LIFTED,
    // Each account's request budget and its concurrency, all and heavy routes', are for one account's
    // share of the service: here one account is the whole load, whose cost at each scale is what is measured.
    ACCOUNT_REQUEST_BUDGET: LIFTED,
    ACCOUNT_CONCURRENCY: '1000',
    ACCOUNT_HEAVY_CONCURRENCY: '1000',
  }
  return { sendgrid, graph, env }
}

/** The first row of a query; a route whose ids the account lacks cannot be measured: it fails, naming what. */
async function one<Row>(db: pg.Pool, what: string, statement: string, values: unknown[]): Promise<Row> {
  const { rows } = await db.query(statement, values)
  if (!rows[0]) throw new Error(`no ${what} in the account`)
  return rows[0] as Row
}

/**
 * The largest account (`Agency 0`, about 11 % of every table) and a small one: the first account that is not
 * an agency from the middle of the accounts on. The skew gives the account at a given rank about as many
 * rows at every scale (bench/README.md), so it is the same small account with a hundred times the neighbours.
 */
/** `--only`'s route names (comma-separated), each one of `routes`: a UsageError names any other. */
export function onlyRoutes(raw: string | undefined, routes: { name: string }[]): string[] | undefined {
  const only = raw?.split(',').map((name) => name.trim())
  const known = new Set(routes.map((route) => route.name))
  const unknown = only?.filter((name) => !known.has(name)) ?? []
  if (unknown.length > 0) throw new UsageError(`--only: no route named ${unknown.join(', ')}`)
  return only
}

/**
 * A server started as `npm start` does on `databaseUrl`, with the providers the routes need and `env`, and
 * what a `Scale` reads of it: its target, a pool on its database, its two accounts.
 */
export async function startVolumeServer(
  start: StartCommand,
  providers: Providers,
  databaseUrl: string,
  env: Record<string, string> = {},
): Promise<Pick<Scale, 'target' | 'db' | 'accounts'> & { server: RunningServer }> {
  const server = await startServer({
    start,
    postgres: false,
    env: { ...providers.env, DATABASE_URL: databaseUrl, ...env },
  })
  const db = new pg.Pool({ connectionString: databaseUrl, max: 4 })
  // A run's copy is dropped with FORCE and its clusters stopped at the end, which ends idle connections.
  db.on('error', () => undefined)
  registerStop(() => db.end())
  const target = { ...server, databaseUrl }
  return { server, target, db, accounts: await volumeAccounts(target, db) }
}

export async function volumeAccounts(target: Target, db: pg.Pool): Promise<VolumeAccount[]> {
  const number = `substring(name from '[0-9]+$')::int`
  const largest = await one<{ id: string; name: string }>(
    db,
    'account named Agency 0',
    `select id, name from accounts where name = 'Agency 0'`,
    [],
  )
  const small = await one<{ id: string; name: string }>(
    db,
    'small account',
    `select id, name from accounts where name like 'Account %'
       and ${number} >= (select count(*) from accounts) / 2 order by ${number} limit 1`,
    [],
  )
  return Promise.all([accountOf(target, db, 'largest', largest), accountOf(target, db, 'small', small)])
}

async function accountOf(
  target: Target,
  db: pg.Pool,
  label: AccountLabel,
  account: { id: string; name: string },
): Promise<VolumeAccount> {
  // The first of its users (user-<5 × number>@seed.example.com) is its main member, in every room.
  const user = await one<{ id: string; email: string }>(
    db,
    'user',
    `select u.id, u.email from memberships m join users u on u.id = m.user_id
     where m.account_id = $1 order by length(u.email), u.email limit 1`,
    [account.id],
  )
  // Long enough for a whole run at the large scale.
  const { token } = await adminPost<{ token: string }>(target, '/v1/admin/tokens', {
    user_id: user.id,
    account_id: account.id,
    ttl: 6 * 3600,
  })
  return { label, name: account.name, accountId: account.id, userId: user.id, email: user.email, token }
}

/** What each account holds of the tables its routes read, counted once per scale for the report. */
export const ACCOUNT_TABLES = [
  'contacts',
  'communications',
  'communication_events',
  'room_messages',
  'funnel_form_submissions',
  'funnel_short_link_clicks',
  'review_requests',
  'leads',
] as const

export async function accountRows(db: pg.Pool, accountId: string): Promise<Record<string, number>> {
  const { rows } = await db.query(
    `select ${ACCOUNT_TABLES.map((table) => `(select count(*) from ${table} where account_id = $1)::int as ${table}`).join(', ')}`,
    [accountId],
  )
  return rows[0]
}

const asMember = (account: VolumeAccount, path: string): BenchRequest => ({
  method: 'GET',
  path,
  headers: { authorization: `Bearer ${account.token}`, ...VIA_TLS_PROXY },
})

/** A JSON post of the account's member; `body`, or each request's own (`next`). */
const postAsMember = (account: VolumeAccount, path: string, body?: unknown): BenchRequest => ({
  method: 'POST',
  path,
  headers: {
    authorization: `Bearer ${account.token}`,
    'content-type': 'application/json',
    ...VIA_TLS_PROXY,
  },
  ...(body !== undefined && { body: JSON.stringify(body) }),
})

/** A JSON post without credentials (a provider's webhook, a public form), each request its own. */
const freshPosts = (path: string, next: () => RequestChange): BenchRequest => ({
  method: 'POST',
  path,
  headers: { 'content-type': 'application/json', ...VIA_TLS_PROXY },
  next,
})

/** An outbox page of the operator (the admin token), as a browser asks for it. */
const asOperator = (scale: Scale, path: string): BenchRequest => ({
  method: 'GET',
  path,
  headers: { authorization: `Bearer ${scale.target.adminToken}`, accept: 'text/html', ...VIA_TLS_PROXY },
})

/** The account's room of the latest activity (every room holds as many messages) and its last message. */
async function newestRoom(scale: Scale, account: VolumeAccount) {
  const room = await one<{ id: string }>(
    scale.db,
    'room',
    'select id from rooms where account_id = $1 order by last_activity desc, id limit 1',
    [account.accountId],
  )
  const message = await one<{ content: string }>(
    scale.db,
    'message',
    'select content from room_messages where account_id = $1 and room_id = $2 order by seq desc limit 1',
    [account.accountId, room.id],
  )
  const words = message.content.split(' ').filter((word) => word.length > 0)
  const longest = words.reduce((a, b) => (b.length > a.length ? b : a), '')
  return {
    id: room.id,
    // The message's longest word: found about once in the account at every scale.
    rareWord: longest,
    // A word of three letters (the seed's words are of twelve letters): found in about one message of 2,000
    // (115 of the largest account's 206,900 at --scale 1), so its hits grow with the account.
    commonWord: words.find((word) => word.length === 3) ?? longest,
  }
}

const newestContact = (scale: Scale, account: VolumeAccount) =>
  one<{ id: string; name: string; email: string }>(
    scale.db,
    'contact',
    'select id, name, email from contacts where account_id = $1 order by id desc limit 1',
    [account.accountId],
  )

const newestEmail = (scale: Scale, account: VolumeAccount) =>
  one<{ id: string; contact: string }>(
    scale.db,
    'email sent to a contact',
    `select id, contact_ids[1] as contact from communications
     where account_id = $1 and type = 'OUTGOING' and cardinality(contact_ids) > 0
     order by created_at desc, id desc limit 1`,
    [account.accountId],
  )

/** The `value` of `statement`'s first row for the account: the busiest funnel, link or campaign. */
const busiest = (scale: Scale, account: VolumeAccount, what: string, statement: string) =>
  one<{ value: string }>(scale.db, what, statement, [account.accountId]).then((row) => row.value)

/** What a client reads every day, in the order they are measured. */
export const READS: VolumeRoute[] = [
  { name: 'room list', prepare: async (_, a) => asMember(a, '/api/conversation-v2/room') },
  {
    name: "a room's messages",
    prepare: async (s, a) =>
      asMember(a, `/api/conversation-v2/room/${(await newestRoom(s, a)).id}/messages?limit=50`),
  },
  {
    name: 'room search for a rare word',
    prepare: async (s, a) =>
      asMember(
        a,
        `/api/conversation-v2/room/search?q=${encodeURIComponent((await newestRoom(s, a)).rareWord)}`,
      ),
  },
  {
    name: 'room search for a common word',
    prepare: async (s, a) =>
      asMember(
        a,
        `/api/conversation-v2/room/search?q=${encodeURIComponent((await newestRoom(s, a)).commonWord)}`,
      ),
  },
  // A word of one letter, in about one message of seven (the seed's words are its letters, the short
  // ones the most frequent): 1,016 of the largest account's 7,300 messages at --scale 0.01, about 29,000 of
  // 206,900 at 1, so that ranking every hit would grow with the account.
  {
    name: 'room search for a one-letter word',
    prepare: async (_, a) => asMember(a, '/api/conversation-v2/room/search?q=d'),
  },
  {
    name: 'room search for a one-letter word without another',
    prepare: async (_, a) => asMember(a, `/api/conversation-v2/room/search?q=${encodeURIComponent('d -g')}`),
  },
  { name: 'contacts', prepare: async (_, a) => asMember(a, '/v1/contacts') },
  {
    name: 'contact search',
    prepare: async (s, a) =>
      asMember(a, `/v1/contacts?search=${encodeURIComponent((await newestContact(s, a)).name)}`),
  },
  // Two letters no contact holds (the seed's names have neither), and a term every contact's email
  // holds (contact-<n>@example.com).
  {
    name: 'contact search for two letters found nowhere',
    prepare: async (_, a) => asMember(a, '/v1/contacts?search=qz'),
  },
  {
    name: 'contact search for a term every contact holds',
    prepare: async (_, a) => asMember(a, '/v1/contacts?search=exa'),
  },
  {
    name: 'a contact',
    prepare: async (s, a) => asMember(a, `/v1/contacts/${(await newestContact(s, a)).id}`),
  },
  { name: 'emails', prepare: async (_, a) => asMember(a, '/v1/e/mailprovider/communications') },
  {
    name: "a contact's emails",
    prepare: async (s, a) =>
      asMember(a, `/v1/e/mailprovider/communications?contact_id=${(await newestEmail(s, a)).contact}`),
  },
  {
    name: 'an email',
    prepare: async (s, a) => asMember(a, `/v1/e/mailprovider/communications/${(await newestEmail(s, a)).id}`),
  },
  { name: 'funnels', prepare: async (_, a) => asMember(a, '/v1/funnels') },
  {
    name: 'form submissions',
    prepare: async (s, a) => {
      const funnel = await busiest(
        s,
        a,
        'funnel with submissions',
        `select funnel_id as value from funnel_form_submissions where account_id = $1
         group by funnel_id order by count(*) desc, funnel_id limit 1`,
      )
      return asMember(a, `/v1/funnels/${funnel}/forms`)
    },
  },
  {
    name: 'short-link statistics, a year',
    prepare: async (s, a) => {
      const code = await busiest(
        s,
        a,
        'short link with clicks',
        `select l.code as value from funnel_short_link_clicks c
           join funnel_short_links l on l.account_id = c.account_id and l.id = c.link_id
         where c.account_id = $1 group by l.code order by count(*) desc, l.code limit 1`,
      )
      const day = (at: Date) => at.toISOString().slice(0, 10)
      const lastDay = (at: Date) => day(new Date(at.getTime() - 86_400_000))
      return asMember(a, `/v1/funnels/shorten/${code}?from=${day(YEAR_START)}&to=${lastDay(YEAR_END)}`)
    },
  },
  { name: 'review requests', prepare: async (_, a) => asMember(a, '/reviews/requests') },
  {
    name: 'review statistics, a year',
    prepare: async (_, a) =>
      asMember(a, `/reviews/stats?from=${YEAR_START.toISOString()}&to=${YEAR_END.toISOString()}`),
  },
  {
    name: 'leads',
    prepare: async (s, a) => {
      const campaign = await busiest(
        s,
        a,
        'lead campaign with leads',
        `select campaign_id as value from leads where account_id = $1
         group by campaign_id order by count(*) desc, campaign_id limit 1`,
      )
      return asMember(a, `/v1/integrations/socialnet/campaigns/${campaign}/leads`)
    },
  },
  { name: 'OAuth grants', prepare: async (_, a) => asMember(a, '/v1/auth/oauth/grants') },
  {
    name: 'admin outbox',
    prepare: async (s, a) => asOperator(s, `/v1/admin/outbox?account_id=${a.accountId}`),
  },
  {
    name: 'admin outbox of every account',
    operator: true,
    prepare: async (s: Scale) => asOperator(s, '/v1/admin/outbox'),
  },
]

/** A counter of the run's requests of one kind: every request of a write is a new one. */
const counter = () => {
  let n = 0
  return () => n++
}

/**
 * `POST /v1/e/mailprovider/mail` through the fake SendGrid, to the account's newest contacts in turn (one
 * contact for every send would make them queue on its conversation's row); credits given first.
 */
async function emailSend(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  await adminPost(scale.target, `/v1/admin/accounts/${account.accountId}/credits`, { amount: 100_000_000 })
  const { rows: contacts } = await scale.db.query<{ name: string; email: string }>(
    'select name, email from contacts where account_id = $1 order by id desc limit 200',
    [account.accountId],
  )
  if (contacts.length === 0) throw new Error('no contact in the account')
  const next = counter()
  return {
    ...postAsMember(account, '/v1/e/mailprovider/mail'),
    next: () => {
      const contact = contacts[next() % contacts.length] as { name: string; email: string }
      return {
        body: JSON.stringify({
          subject: 'Your quote, {{contact.name}}',
          sender: { email: account.email, name: 'Bench sender' },
          recipients: [{ email: contact.email, name: contact.name }],
          content: [
            { type: 'text/plain', value: 'Dear {{contact.name}}, here is the quote we spoke about.' },
          ],
          origin: 'bench',
        }),
      }
    },
  }
}

/** SendGrid's signed event posts about the account's newest sent emails, each with new event ids. */
async function deliveryEvents(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const { rows: records } = await scale.db.query<SentRecord>(
    `select id, account_id as "accountId", msg_id as "msgId", body #>> '{personalizations,0,to,0,email}' as email
     from communications where account_id = $1 and type = 'OUTGOING' and module = 'SENDGRID' and msg_id is not null
     order by created_at desc limit 1000`,
    [account.accountId],
  )
  if (records.length === 0) throw new Error('no email sent through SendGrid in the account')
  const runId = `${RUN}-${randomBytes(3).toString('hex')}`
  const next = counter()
  return freshPosts(EVENTS_PATH, () => {
    const body = batchBody(runId, next(), records, account.userId, DELIVERY_EVENTS_PER_POST)
    return { body, headers: signedHeaders(body) }
  })
}

/** Lead forms posted to the first step of the account's first live funnel; one in ten by a known person. */
async function formSubmit(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const funnel = await one<Funnel>(
    scale.db,
    'live funnel',
    `select f.id as "funnelId", s.id as "stepId" from funnels f
       join funnel_steps s on s.account_id = f.account_id and s.funnel_id = f.id and s."order" = 0
     where f.account_id = $1 and f.status = 'active' order by f.id limit 1`,
    [account.accountId],
  )
  // Tagged by the run and the side: the people are new to this account.
  const offset = randomInt(1_000_000, 1_000_000_000)
  const next = counter()
  return freshPosts(SUBMIT_PATH, () => {
    const n = next()
    return { body: submission(funnel, offset + n, offset + personOf(n)).body }
  })
}

/** Forms the fake Graph API was given (both scales seed the same page and form ids). */
const formsOnGraph = new Set<string>()

/**
 * Meta's signed lead events for the account's first campaign, one new lead each, which Graph then holds: the
 * account is connected first (its Meta user token stored, as `POST /v1/e/socialnet/auth/token` does).
 */
async function leadWebhook(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const { graph } = scale.providers
  const campaign = await one<{ pageId: string; formId: string }>(
    scale.db,
    'lead campaign',
    `select page_id as "pageId", form_id as "formId" from lead_campaigns where account_id = $1 order by id limit 1`,
    [account.accountId],
  )
  const userToken = `EAAuser${RUN}${randomBytes(6).toString('hex')}`
  graph.addUser(userToken, { [campaign.pageId]: `EAApage${RUN}${campaign.pageId}` })
  if (!formsOnGraph.has(campaign.formId)) {
    graph.addForm(campaign.pageId, { id: campaign.formId, name: `Form ${campaign.formId}` })
    formsOnGraph.add(campaign.formId)
  }
  await sendOnce(
    scale.target.baseUrl,
    postAsMember(account, '/v1/e/socialnet/auth/token', {
      source: 'socialnet-leads',
      access_token: userToken,
      expires_in: 5_184_000,
    }),
  ).then(expect2xx('storing the Meta token'))
  const next = counter()
  const side = randomInt(100_000, 1_000_000)
  return freshPosts('/webhooks/socialnet/leads', () => {
    const n = next()
    const leadgenId = `4${RUN}${side}${n}`
    graph.addLead(campaign.formId, {
      id: leadgenId,
      created_time: new Date(),
      field_data: [
        { name: 'email', values: [`lead-${RUN}-${side}-${n}@bench.example`] },
        { name: 'full_name', values: [`Bench Lead ${n}`] },
      ],
    })
    const change = { leadgen_id: leadgenId, page_id: campaign.pageId, form_id: campaign.formId }
    const { headers, payload } = signedLeadPost(leadEvent([change]), LEADS_APP.appSecret)
    return { headers, body: payload }
  })
}

/** Stripe's signed `charge.succeeded` events naming the account (its seeded configuration asks for a review). */
async function paymentWebhook(_: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const runId = `${RUN}${randomBytes(3).toString('hex')}`
  const next = counter()
  return freshPosts(CHARGE_PATH, () => chargeEvent(runId, account.accountId, next()))
}

/**
 * Refresh grants of an app of the run, each using a refresh token only once: the grants start from codes
 * exchanged before the clock, and every answer's refresh token goes back into the pool for a later request.
 * A round's last requests are cut off unanswered (their tokens lost), so the pool holds a connection's worth
 * for every round, and one more.
 */
async function tokenExchange(scale: Scale, account: VolumeAccount): Promise<BenchRequest> {
  const [client] = await registerApps(scale.target, 1)
  if (!client) throw new Error('no OAuth app registered')
  const runs = Math.ceil(scale.load.durationSeconds / 2) + 2
  const exchanges = await insertCodes(scale.db, [client], [account], scale.load.connections * (runs + 1))
  const pool: string[] = []
  const headers = {
    authorization: client.authorization,
    'content-type': 'application/x-www-form-urlencoded',
    ...VIA_TLS_PROXY,
  }
  const keep = (status: number, body: string) => {
    if (status === 200) pool.push((JSON.parse(body) as { refresh_token: string }).refresh_token)
  }
  for (const exchange of exchanges) {
    const answer = await sendOnce(scale.target.baseUrl, {
      method: 'POST',
      path: TOKEN_PATH,
      headers: { ...headers, ...exchange.headers },
      body: exchange.body,
    })
    expect2xx('a code exchange')(answer)
    keep(answer.status, answer.body)
  }
  return {
    method: 'POST',
    path: TOKEN_PATH,
    headers,
    next: () => ({
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        refresh_token: pool.shift() ?? 'spent',
      }).toString(),
    }),
    onAnswer: keep,
  }
}

/** The hot writes, in the order they are measured: emails first, their events after. */
export const WRITES: VolumeRoute[] = [
  { name: 'email send', writes: true, prepare: emailSend },
  { name: 'delivery events', writes: true, prepare: deliveryEvents },
  { name: 'form submit', writes: true, prepare: formSubmit },
  { name: 'lead webhook', writes: true, prepare: leadWebhook },
  { name: 'payment webhook', writes: true, prepare: paymentWebhook },
  { name: 'token exchange', writes: true, prepare: tokenExchange },
]

export const ROUTES: VolumeRoute[] = [...READS, ...WRITES]

/** The request once, as the route's next one (each write's own), its answer told to the request. */
export async function sendOnce(
  baseUrl: string,
  request: BenchRequest,
): Promise<{ status: number; body: string }> {
  const change = request.next?.() ?? {}
  const response = await fetch(new URL(change.path ?? request.path, baseUrl), {
    method: request.method,
    headers: { ...request.headers, ...change.headers },
    body: change.body ?? request.body,
    signal: AbortSignal.timeout(30_000),
  })
  const body = await response.text()
  request.onAnswer?.(response.status, body)
  return { status: response.status, body }
}

const expect2xx =
  (what: string) =>
  ({ status, body }: { status: number; body: string }) => {
    if (status < 200 || status > 299) throw new Error(`${what} answered ${status}: ${body.slice(0, 300)}`)
  }

const JOBS_SETTLE_MS = 60_000

/**
 * Waits until no job is due (queued, retried or running), as the writes queue them (a batch of events to
 * apply, a lead to capture, a review request to schedule); false when some still are after a minute.
 */
export async function jobsDone(db: pg.Pool): Promise<boolean> {
  const deadline = Date.now() + JOBS_SETTLE_MS
  for (;;) {
    const { rows } = await db.query<{ due: number }>(
      `select count(*)::int as due from ${JOBS_SCHEMA}.job
       where state in ('created', 'retry', 'active') and start_after <= now()`,
    )
    if (rows[0]?.due === 0) return true
    if (Date.now() > deadline) return false
    await delay(100)
  }
}
