import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { stopEverything } from '../bench/children.js'
import type { BenchRequest } from '../bench/scenario.js'
import { seedVolume } from '../bench/seed-volume.js'
import { type RunningServer, startServer } from '../bench/servers.js'
import { readStartCommand } from '../bench/start-command.js'
import {
  DELIVERY_EVENTS_PER_POST,
  isOperatorRoute,
  jobsDone,
  type Providers,
  READS,
  type Scale,
  sendOnce,
  startProviders,
  type VolumeAccount,
  type VolumeRoute,
  volumeAccounts,
  WRITES,
} from '../bench/volume-routes.js'
import { createTestDatabase, type TestDatabase } from './helpers/database.js'
import { npmScriptCommand, PROJECT_ROOT } from './helpers/npm-scripts.js'
import { type WatchedProcess, watchProcess } from './helpers/processes.js'
import { PRODUCTION_ENV } from './helpers/production.js'

/**
 * docs/operating.md's "Backups" commands, run as an operator runs them: a seeded database (every area: contacts,
 * emails and their events, do-not-disturb, rooms, funnels, reviews, leads, OAuth apps, queued jobs) served
 * by the compiled server, dumped with `pg_dump`, restored with `pg_restore` into a new database, and served
 * again from there: every read answers as before, and writes, the migrations' functions and pg-boss work.
 */
// pg_dump and pg_restore back up PostgreSQL; the embedded database is backed up by copying DATA_DIR (docs/operating.md).
describe.skipIf(!process.env.DATABASE_URL)('a backup restored into a new database (PostgreSQL only)', () => {
  let providers: Providers
  let source: TestDatabase
  let restored: { name: string; url: string }
  let served: Scale
  let worker: WatchedProcess | undefined
  /** Every read's answer on the dumped database, by route and account. */
  const before = new Map<string, string>()
  const startedAt = new Date()

  beforeAll(async () => {
    providers = await startProviders()
    source = await createTestDatabase()
    await seedVolume(source.url as string, { scale: 0.001 })

    // Served with no job worker, so that the writes' jobs are still queued when the dump is taken.
    const original = await serve(source.url as string)
    await sendAll(original, WRITES)
    for (const [key, answer] of await readAll(original)) before.set(key, answer)
    await original.stop()

    restored = await restoreWithReadmeCommands(source.url as string)
    served = await serve(restored.url)
  }, 120_000)

  afterAll(async () => {
    worker?.child.kill('SIGKILL')
    await served?.db.end()
    await stopEverything()
    await source?.drop()
    if (restored) await dropDatabase(restored.name)
  })

  /** The compiled server on `databaseUrl`, as production runs it, and the two accounts the routes are for. */
  async function serve(databaseUrl: string): Promise<Scale & { stop(): Promise<void> }> {
    const server = await startServer({
      start: await readStartCommand(PROJECT_ROOT),
      postgres: false,
      env: { ...serverEnv(databaseUrl), RUN_WORKERS: 'false' },
    })
    const db = new pg.Pool({ connectionString: databaseUrl, max: 2 })
    const target = { ...server, databaseUrl }
    const accounts = await volumeAccounts(target, db)
    const load = { connections: 1, durationSeconds: 1 }
    return { target, db, providers, accounts, load, stop: () => stopServing(server, db) }
  }

  /** Both servers and the worker share the secrets: the restored rows are read with the dumped ones' keys. */
  const serverEnv = (databaseUrl: string) => ({
    ...PRODUCTION_ENV,
    ...providers.env,
    // The volume routes' requests come as through a TLS proxy on this host (bench/scenario.ts).
    TRUST_PROXY: 'loopback',
    DATABASE_URL: databaseUrl,
  })

  async function stopServing(server: RunningServer, db: pg.Pool) {
    await db.end()
    await server.stop()
  }

  /** Each route's request for each account (or once, the operator's), sent once. */
  async function sendEach(
    scale: Scale,
    routes: VolumeRoute[],
    each: (key: string, request: BenchRequest) => Promise<void>,
  ) {
    for (const route of routes) {
      const accounts: (VolumeAccount | undefined)[] = isOperatorRoute(route) ? [undefined] : scale.accounts
      for (const account of accounts) {
        const request = isOperatorRoute(route)
          ? await route.prepare(scale)
          : await route.prepare(scale, account as VolumeAccount)
        await each(`${route.name} (${account?.label ?? 'operator'})`, request)
      }
    }
  }

  /**
   * Every read's status and body, the servers' addresses taken out: the two listen on two ports, and an email
   * keeps the address of the server that sent it (its List-Unsubscribe link).
   */
  async function readAll(scale: Scale): Promise<Map<string, string>> {
    const answers = new Map<string, string>()
    await sendEach(scale, [...READS, ...DO_NOT_DISTURB_READS], async (key, request) => {
      const { status, body } = await sendOnce(scale.target.baseUrl, request)
      answers.set(key, `${status} ${body.replace(/http:\/\/127\.0\.0\.1:\d+/g, '<a server>')}`)
    })
    return answers
  }

  /** Each write once per account: every one answers 2xx. */
  async function sendAll(scale: Scale, routes: VolumeRoute[]) {
    const refused: string[] = []
    await sendEach(scale, routes, async (key, request) => {
      const { status, body } = await sendOnce(scale.target.baseUrl, request)
      if (status < 200 || status > 299) refused.push(`${key}: ${status} ${body.slice(0, 300)}`)
    })
    expect(refused).toEqual([])
  }

  /** Rows of `table` the account got during this test (the seed's all lie before 2026-11-01). */
  const added = async (table: string, accountId: string, where = 'true', time = 'created_at') => {
    const { rows } = await served.db.query(
      `select count(*)::int as n from ${table} where account_id = $1 and ${time} >= $2 and ${where}`,
      [accountId, startedAt],
    )
    return rows[0].n as number
  }

  /** What each write's jobs leave, per account: `times` rounds of WRITES, each's jobs done. */
  async function expectWritesDone(accountId: string, times: number) {
    expect(await added('communications', accountId, `module = 'SENDGRID'`)).toBe(times)
    expect(await added('communication_events', accountId, 'communication_id is not null')).toBe(
      times * DELIVERY_EVENTS_PER_POST,
    )
    expect(await added('funnel_form_submissions', accountId, 'contact_id is not null', 'submitted_at')).toBe(
      times,
    )
    expect(await added('leads', accountId, `status = 'captured'`)).toBe(times)
    expect(await added('review_requests', accountId)).toBe(times)
    expect(await added('oauth_audit_events', accountId, `event = 'token.refreshed'`)).toBe(times)
  }

  it('answers every read on the restored database as on the dumped one', async () => {
    const after = await readAll(served)
    expect(after.size).toBe(2 * (READS.length + DO_NOT_DISTURB_READS.length) - 1)
    expect(Object.fromEntries(after)).toEqual(Object.fromEntries(before))
  })

  it('holds the extensions the migrations created', async () => {
    // btree_gin serves communications_account_contacts (an account-led GIN index), written by every email sent
    // below and read by "a contact's emails"; pg_trgm no index uses since migration 0032, but it was created.
    const { rows } = await served.db.query(
      `select extname from pg_extension where extname in ('btree_gin', 'pg_trgm') order by extname`,
    )
    expect(rows.map((row) => row.extname)).toEqual(['btree_gin', 'pg_trgm'])
  })

  it('runs the jobs queued before the dump once a worker starts, then takes every write and runs its jobs', async () => {
    worker = await startWorker(serverEnv(restored.url))
    expect(await jobsDone(served.db)).toBe(true)
    for (const { accountId } of served.accounts) await expectWritesDone(accountId, 1)

    await sendAll(served, WRITES)
    expect(await jobsDone(served.db)).toBe(true)
    for (const { accountId } of served.accounts) await expectWritesDone(accountId, 2)
  }, 90_000)

  it("finds new contacts and messages through the migrations' search functions, and takes a do-not-disturb entry", async () => {
    const [account] = served.accounts as [VolumeAccount]
    const word = `restored${randomBytes(4).toString('hex')}`
    const call = (method: BenchRequest['method'], path: string, body?: unknown) =>
      sendOnce(served.target.baseUrl, {
        method,
        path,
        headers: {
          authorization: `Bearer ${account.token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      })

    // contact_search_keys: its GIN index is written on insert and read by the search.
    const contact = await call('POST', '/v1/contacts', { name: `Ada ${word}`, email: `${word}@example.com` })
    expect(contact.status, contact.body).toBe(201)
    const contacts = await call('GET', `/v1/contacts?search=${word}`)
    expect(JSON.parse(contacts.body).data).toEqual([
      expect.objectContaining({ email: `${word}@example.com` }),
    ])

    // room_search_vector: the generated column of a new message; room_search_query: the search's.
    const { rows } = await served.db.query('select id from rooms where account_id = $1 order by id limit 1', [
      account.accountId,
    ])
    const message = await call('POST', `/api/conversation-v2/room/${rows[0].id}/messages`, {
      content: `The restored ${word} works`,
    })
    expect(message.status, message.body).toBe(201)
    const search = await call('GET', `/api/conversation-v2/room/search?q=${word}`)
    expect(JSON.parse(search.body).results).toEqual([
      expect.objectContaining({
        message: expect.objectContaining({ content: `The restored ${word} works` }),
      }),
    ])

    const dnd = await call('POST', '/v1/e/mailprovider/dnd', { value: `${word}@example.com` })
    expect(dnd.status, dnd.body).toBe(201)
    const listed = await call('GET', `/v1/e/mailprovider/dnd?search=${word}`)
    expect(JSON.parse(listed.body).data).toEqual([expect.objectContaining({ value: `${word}@example.com` })])
  })
})

/** The do-not-disturb list, which the volume bench's reads leave out. */
const DO_NOT_DISTURB_READS: VolumeRoute[] = [
  {
    name: 'do-not-disturb list',
    prepare: async (_, account) => ({
      method: 'GET',
      path: '/v1/e/mailprovider/dnd?limit=100',
      headers: { authorization: `Bearer ${account.token}` },
    }),
  },
]

/**
 * docs/operating.md's Backups block run in a shell of its own (in a scratch directory, for the dump file) against
 * `databaseUrl`, restoring into a new database named after this run's test databases (so that the run's
 * teardown drops it if the test fails before it does).
 */
async function restoreWithReadmeCommands(databaseUrl: string): Promise<{ name: string; url: string }> {
  const name = `${inject('testDatabasePrefix')}restored_${randomBytes(4).toString('hex')}`
  const url = new URL(databaseUrl)
  url.pathname = `/${name}`
  const run = spawnSync('sh', ['-e', '-c', readmeBackupCommands()], {
    cwd: mkdtempSync(join(tmpdir(), 'platform-backup-')),
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: databaseUrl,
      RESTORED_DATABASE: name,
      RESTORED_URL: url.href,
    },
    encoding: 'utf8',
    timeout: 60_000,
  })
  expect(run.status, run.stdout + run.stderr).toBe(0)
  return { name, url: url.href }
}

/** The commands of docs/operating.md's "Backups" (the first ```sh block after its heading). */
function readmeBackupCommands(): string {
  const readme = readFileSync(join(PROJECT_ROOT, 'docs/operating.md'), 'utf8')
  const block = readme
    .split('\n## Backups\n')[1]
    ?.split(/```sh[^\n]*\n/)[1]
    ?.split('```')[0]
  if (!block) throw new Error('docs/operating.md lost its Backups commands')
  return block
}

/** `npm run worker` (the compiled worker) on `env`, once its workers have started. */
async function startWorker(env: Record<string, string>): Promise<WatchedProcess> {
  const { command, args } = npmScriptCommand('worker')
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-worker-'))
  const child: ChildProcess = spawn(command, args, {
    cwd: dataDir,
    env: { PATH: process.env.PATH, ...env, DATA_DIR: dataDir, LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const worker = watchProcess(child)
  await worker.printed('Job workers started', 30_000)
  return worker
}

async function dropDatabase(name: string): Promise<void> {
  const client = new pg.Client({ connectionString: process.env.DATABASE_URL })
  await client.connect()
  try {
    await client.query(`drop database if exists ${name} with (force)`)
  } finally {
    await client.end()
  }
}
