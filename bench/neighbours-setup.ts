import { execFile } from 'node:child_process'
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { promisify } from 'node:util'
import type pg from 'pg'
import { type FakeGraphApi, startFakeGraphApi } from '../test/fakes/graph-api.js'
import { type FakeSendgrid, startFakeSendgrid } from '../test/fakes/sendgrid.js'
import { addMember, adminPost, createMember, type Member } from './admin.js'
import { type Child, registerStop, startNode, stopChild } from './children.js'
import { createBenchDatabase } from './postgres.js'
import type { Target } from './scenario.js'
import { ROOMS_PATH } from './scenarios/rooms-seed.js'
import { REPO_ROOT, SERVER_NODE } from './servers.js'
import { parseNodeScript } from './start-command.js'

/**
 * What the neighbours scenario sets up: the run's secrets and providers (fake SendGrid
 * counting every review request email, fake Graph serving every lead), its database migrated as a
 * deployment migrates one (`npm run db:migrate`), the job workers as production runs them (`npm run worker`
 * beside API instances with RUN_WORKERS=false), and the two accounts, made as operators and users make them.
 */

const SENDGRID_KEY = `SG.neighbours-${randomBytes(8).toString('hex')}`
const RUN = String(randomInt(100_000, 1_000_000))
const LEADS_APP = {
  appId: `1${RUN}`,
  appSecret: randomBytes(16).toString('hex'),
  verifyToken: randomBytes(16).toString('hex'),
}
const WORKER_START_TIMEOUT_MS = 60_000
const MIGRATE_TIMEOUT_MS = 120_000
const run = promisify(execFile)
const SYNC_TIMEOUT_MS = 60_000
const TOKEN_TTL_SECONDS = 4 * 3600

export interface Providers {
  sendgrid: FakeSendgrid
  graph: FakeGraphApi
  /** The SendGrid event webhook's private key (PKCS #8 PEM); the servers hold its public key. */
  eventKeyPem: string
  stripeSecret: string
  leadsAppSecret: string
  /** The environment every process of the run shares (the instances' and the workers'). */
  env: Record<string, string>
  databaseUrl: string
}

let providers: Providers | undefined
export const providersOfRun = (): Providers => {
  if (!providers) throw new Error('neighbours: the providers were not started')
  return providers
}

/** A P-256 private key (PKCS #8 PEM), the run's OAuth signing key. */
const signingKey = () =>
  generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string

/** package.json's script `name` as node arguments (start-command.ts), run with the servers' node. */
async function scriptArgs(name: string): Promise<string[]> {
  const manifest = JSON.parse(await readFile(join(REPO_ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>
  }
  const text = manifest.scripts[name]
  if (!text) throw new Error(`package.json has no scripts.${name}`)
  return parseNodeScript(text, REPO_ROOT).nodeArgs
}

/**
 * A fresh database migrated by `npm run db:migrate` (its node command), as a deployment migrates before the
 * release starts: a production server on PostgreSQL refuses a database lacking migrations. Dropped at the end.
 */
async function migratedDatabase(env: Record<string, string>): Promise<string> {
  const database = await createBenchDatabase()
  registerStop(() => database.drop())
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-migrate-'))
  try {
    // A child of its own without the IPC channel startNode opens: this one exits when it is done.
    await run(SERVER_NODE, await scriptArgs('db:migrate'), {
      cwd: dataDir,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...env,
        DATABASE_URL: database.url,
        DATA_DIR: dataDir,
        PUBLIC_BASE_URL: 'http://127.0.0.1',
      },
      timeout: MIGRATE_TIMEOUT_MS,
    })
  } catch (error) {
    const { stdout, stderr } = error as { stdout?: string; stderr?: string }
    throw new Error(`npm run db:migrate failed: ${(error as Error).message}\n${stdout ?? ''}${stderr ?? ''}`)
  } finally {
    await rm(dataDir, { recursive: true, force: true })
  }
  return database.url
}

/**
 * The scenario's `serverEnv`: fakes and secrets started before the servers, which get their URLs. Both
 * instances, and the workers started later, share this environment.
 */
export async function startProviders(): Promise<Record<string, string>> {
  const sendgrid = await startFakeSendgrid({ apiKeys: [SENDGRID_KEY] })
  registerStop(() => sendgrid.close())
  const graph = await startFakeGraphApi({ appId: LEADS_APP.appId, appSecret: LEADS_APP.appSecret })
  registerStop(() => graph.close())
  const eventKeys = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  const stripeSecret = `whsec_${randomBytes(24).toString('base64url')}`
  const env: Record<string, string> = {
    ADMIN_TOKEN: randomBytes(24).toString('hex'),
    JWT_SECRET: randomBytes(32).toString('hex'),
    SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    OAUTH_SIGNING_KEY: signingKey(),
    EDGE_SIGNING_SECRET: randomBytes(32).toString('hex'),
    // Two instances, as production runs several: rate limits, budgets and Socket.IO fan-out go through Redis.
    REDIS_URL: 'redis://127.0.0.1:6379',
    // As docs/deploying.md says: API instances run no jobs; worker processes run them (startWorkers).
    RUN_WORKERS: 'false',
    // The service's default budget and account turns, as production has them (servers.ts lifts them for the
    // other scenarios).
    ACCOUNT_REQUEST_BUDGET: '',
    ACCOUNT_CONCURRENCY: '',
    MAIL_PROVIDER: 'sendgrid',
    SENDGRID_API_KEY: SENDGRID_KEY,
    SENDGRID_BASE_URL: sendgrid.url,
    SENDGRID_WEBHOOK_PUBLIC_KEY: eventKeys.publicKey
      .export({ format: 'der', type: 'spki' })
      .toString('base64'),
    STRIPE_WEBHOOK_SECRET: stripeSecret,
    SOCIALNET_APP_ID: LEADS_APP.appId,
    SOCIALNET_APP_SECRET: LEADS_APP.appSecret,
    SOCIALNET_VERIFY_TOKEN: LEADS_APP.verifyToken,
    GRAPH_API_URL: graph.url,
  }
  const databaseUrl = await migratedDatabase(env)
  env.DATABASE_URL = databaseUrl
  providers = {
    sendgrid,
    graph,
    eventKeyPem: eventKeys.privateKey.export({ format: 'pem', type: 'pkcs8' }) as string,
    stripeSecret,
    leadsAppSecret: LEADS_APP.appSecret,
    env,
    databaseUrl,
  }
  return env
}

/** `count` worker processes as `npm run worker` runs them (its node command), on the instances' environment. */
export async function startWorkers(count: number, publicBaseUrl: string): Promise<Child[]> {
  const { env } = providersOfRun()
  const args = await scriptArgs('worker')
  const workers: Child[] = []
  for (let i = 0; i < count; i++) {
    const dataDir = await mkdtemp(join(tmpdir(), 'bench-worker-'))
    const worker = startNode(`worker ${i + 1}`, args, {
      cwd: dataDir,
      env: {
        PATH: process.env.PATH,
        NODE_ENV: 'production',
        ...env,
        DATA_DIR: dataDir,
        PUBLIC_BASE_URL: publicBaseUrl,
        TRUST_PROXY: 'loopback',
        SHUTDOWN_DELAY_MS: '0',
        // Info, for the line saying the workers started; jobs log at debug.
        LOG_LEVEL: 'info',
      },
      node: SERVER_NODE,
    })
    registerStop(async () => {
      await stopChild(worker)
      await rm(dataDir, { recursive: true, force: true })
    })
    workers.push(worker)
  }
  const deadline = Date.now() + WORKER_START_TIMEOUT_MS
  for (const worker of workers) {
    while (!worker.output().includes('Job workers started')) {
      if (worker.hasExited()) throw new Error(`${worker.name} exited before starting:\n${worker.output()}`)
      if (Date.now() > deadline)
        throw new Error(`${worker.name} did not start within 60 s:\n${worker.output()}`)
      await delay(100)
    }
  }
  return workers
}

/** Calls the API as `member`: the envelope's data; anything but `status` fails the run. */
export async function callAs<T>(
  target: Target,
  member: { token: string },
  method: string,
  path: string,
  body: unknown,
  status = 201,
): Promise<T> {
  const response = await fetch(new URL(path, target.baseUrl), {
    method,
    headers: { authorization: `Bearer ${member.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  const text = await response.text()
  if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${text}`)
  return (JSON.parse(text) as { data: T }).data
}

/** An account asking every paying customer for a Google review by email at once, with `credits` emails. */
export async function reviewingAccount(target: Target, name: string, credits: number): Promise<Member> {
  const account = await adminPost<{ _id: string }>(target, '/v1/admin/accounts', { name })
  const member = await addMember(target, account._id, TOKEN_TTL_SECONDS)
  await adminPost(target, `/v1/admin/accounts/${account._id}/credits`, { amount: credits })
  await callAs(target, member, 'POST', '/reviews/links', {
    platform: 'google',
    url: 'https://g.page/r/bench/review',
  })
  await callAs(
    target,
    member,
    'PUT',
    '/reviews/auto-review-request',
    {
      enabled: true,
      trigger: 'order_completed',
      delay_hours: 0,
      platforms: ['google'],
      send_method: 'email',
    },
    200,
  )
  return member
}

export interface RoomOf {
  id: string
  /** Every member, the owner first. */
  members: Member[]
}

/** A group room of the owner and `others` new users of the account, made through the room API. */
export async function roomOf(target: Target, owner: Member, others: number, name: string): Promise<RoomOf> {
  const members = [owner]
  for (let i = 0; i < others; i++) members.push(await addMember(target, owner.accountId, TOKEN_TTL_SECONDS))
  return roomWith(target, members, name)
}

/** `count` more users of the owner's account, each with a platform JWT. */
export async function membersOf(target: Target, owner: Member, count: number): Promise<Member[]> {
  const members = [owner]
  for (let i = 1; i < count; i++) members.push(await addMember(target, owner.accountId, TOKEN_TTL_SECONDS))
  return members
}

/** A group room of `members` (the first its owner), made through the room API. */
export async function roomWith(target: Target, members: Member[], name: string): Promise<RoomOf> {
  const [owner] = members as [Member]
  const room = await fetch(new URL(ROOMS_PATH, target.baseUrl), {
    method: 'POST',
    headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'group',
      room_name: name,
      conversation_ids: members.slice(1).map((member) => member.conversationId),
    }),
  })
  const text = await room.text()
  if (room.status !== 201) throw new Error(`POST ${ROOMS_PATH} answered ${room.status}: ${text}`)
  return { id: (JSON.parse(text) as { _id: string })._id, members }
}

export interface SentRecord {
  msgId: string
  email: string
}

/** SendGrid records of the account (`module 'SENDGRID'`, known `msg_id`) for delivery events, with SQL. */
export async function insertRecords(db: pg.Pool, accountId: string, count: number): Promise<SentRecord[]> {
  const records = Array.from({ length: count }, (_, i) => ({
    id: randomBytes(12).toString('hex'),
    msgId: randomBytes(11).toString('base64url'),
    email: `recipient-${i}-${RUN}@bench.example`,
  }))
  await db.query(
    `insert into communications (id, account_id, type, module, msg_id, success, to_addresses, subject)
     select id, $1, 'OUTGOING', 'SENDGRID', msg_id, true, array[email], 'bench'
       from unnest($2::text[], $3::text[], $4::text[]) as r(id, msg_id, email)`,
    [accountId, records.map((r) => r.id), records.map((r) => r.msgId), records.map((r) => r.email)],
  )
  return records.map(({ msgId, email }) => ({ msgId, email }))
}

export interface LeadPage {
  pageId: string
  formId: string
}

/** The account's Meta token stored and a campaign claiming each of `pages` pages' lead form; first syncs awaited. */
export async function leadPages(
  target: Target,
  db: pg.Pool,
  member: Member,
  pages: number,
): Promise<LeadPage[]> {
  const { graph } = providersOfRun()
  const own = Array.from({ length: pages }, (_, k) => ({
    pageId: `2${RUN}${String(k).padStart(3, '0')}`,
    formId: `3${RUN}${String(k).padStart(3, '0')}`,
  }))
  const userToken = `bench-user-${RUN}`
  graph.addUser(userToken, Object.fromEntries(own.map((page) => [page.pageId, `bench-page-${page.pageId}`])))
  for (const page of own) graph.addForm(page.pageId, { id: page.formId, name: `Bench form ${page.formId}` })
  await callAs(target, member, 'POST', '/v1/e/socialnet/auth/token', {
    source: 'socialnet-leads',
    access_token: userToken,
    expires_in: 5_184_000,
  })
  const campaignIds: string[] = []
  for (const page of own)
    campaignIds.push(
      (
        await callAs<{ _id: string }>(target, member, 'POST', '/v1/e/socialnet/campaigns', {
          page_id: page.pageId,
          form_id: page.formId,
        })
      )._id,
    )
  const deadline = Date.now() + SYNC_TIMEOUT_MS
  for (;;) {
    const { rows } = await db.query<{ synced: string }>(
      'select count(*) as synced from lead_campaigns where id = any($1) and synced_at is not null',
      [campaignIds],
    )
    if (Number(rows[0]?.synced) === campaignIds.length) return own
    if (Date.now() > deadline) throw new Error("A's lead campaigns were not synced within 60 s of creation")
    await delay(200)
  }
}

/** The `n`-th lead of the run (its Graph id and email), added to the fake Graph on `page`'s form. */
export function addLead(page: LeadPage, n: number): { leadgenId: string; email: string } {
  const leadgenId = `4${RUN}${String(n).padStart(8, '0')}`
  const email = `lead-${RUN}-${n}@bench.example`
  providersOfRun().graph.addLead(page.formId, {
    id: leadgenId,
    created_time: new Date(),
    field_data: [
      { name: 'email', values: [email] },
      { name: 'full_name', values: [`Bench Lead ${n}`] },
    ],
  })
  return { leadgenId, email }
}

export { createMember }
