import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SignJWT } from 'jose'
import { describe } from 'vitest'
import { readMigrations } from '../src/platform/db/migrations.js'
import {
  adminHeaders,
  bearer,
  freePort,
  TEST_ADMIN_TOKEN,
  TEST_JWT_SECRET,
  type TestApp,
} from './helpers/app.js'
import { addUser, createAccount } from './helpers/fixtures.js'
import { npmScriptCommand } from './helpers/npm-scripts.js'
import { test } from './helpers/tenant-test.js'

const root = fileURLToPath(new URL('..', import.meta.url))
const UNKNOWN_ID = '0123456789abcdef01234567'

interface CliRun {
  code: number | null
  stdout: string
  stderr: string
  /** The JSON object on the last line of stdout. */
  json(): Record<string, unknown>
}

/** Runs an npm script of the CLI as the operator does (minus npm); `env` values of undefined are unset. */
function runScript(
  script: 'cli' | 'db:migrate',
  args: string[],
  env: Record<string, string | undefined>,
  cwd = root,
): Promise<CliRun> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env }
  for (const [name, value] of Object.entries(env)) if (value === undefined) delete childEnv[name]
  const { command, args: flags } = npmScriptCommand(script)
  const child = spawn(command, [...flags, ...args], {
    cwd,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) =>
      resolve({
        code,
        stdout,
        stderr,
        json: () => JSON.parse(stdout.trimEnd().split('\n').at(-1) ?? ''),
      }),
    )
  })
}

const adminGet = async (t: TestApp, url: string) =>
  (await t.app.inject({ method: 'GET', url: `/v1/admin${url}`, headers: adminHeaders })).json().data

// Each test spawns its own CLI processes, so they run side by side to keep the file fast. Each process
// is a Node start opening the database (seconds on a loaded two-core machine while the file's other tests
// spawn theirs), so every test here gets more than the default 30 s.
const SEQUENTIAL_CLI_MS = 120_000

describe.concurrent('the operator CLI against a running service', { timeout: SEQUENTIAL_CLI_MS }, () => {
  let platformUrl: string
  const cli = (args: string[], env: Record<string, string | undefined> = {}) =>
    runScript('cli', args, { PLATFORM_URL: platformUrl, ADMIN_TOKEN: TEST_ADMIN_TOKEN, ...env })

  // The CLI is a client of the admin API over HTTP: the file's app listens.
  test.beforeAll(async ({ t }) => {
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = t.app.server.address() as { port: number }
    platformUrl = `http://127.0.0.1:${port}`
  })

  test('account create prints the account, which the admin API then reads', async ({ expect, t }) => {
    const run = await cli([
      'account',
      'create',
      '--name',
      'Acme Agency',
      '--tier',
      'pro',
      '--status',
      'suspended',
      '--listings-entity',
      'entity-7',
    ])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const printed = run.json()
    expect(printed).toMatchObject({ name: 'Acme Agency', tier: 'pro', status: 'suspended' })
    expect(printed.listings).toEqual({ entity: 'entity-7' })
    expect(await adminGet(t, `/accounts/${printed._id}`)).toEqual(printed)

    const child = await cli(['account', 'create', '--name', 'Child', '--parent', printed._id as string])
    expect(child.json()).toMatchObject({ name: 'Child', parent_account: printed._id })
  })

  test('account update changes the account and account get reads the change', async ({ expect, t }) => {
    const accountId = await createAccount(t.app)
    const updated = await cli([
      'account',
      'update',
      '--id',
      accountId,
      '--status',
      'suspended',
      '--name',
      'Renamed',
      '--listings-entity',
      'entity-9',
      '--tier',
      'enterprise',
    ])
    expect(updated.json()).toMatchObject({ _id: accountId, name: 'Renamed', status: 'suspended' })
    const read = await cli(['account', 'get', '--id', accountId])
    expect(read.json()).toMatchObject({
      _id: accountId,
      name: 'Renamed',
      status: 'suspended',
      tier: 'enterprise',
      listings: { entity: 'entity-9' },
    })
  })

  test('user create makes a main member of the account and user get reads the user', async ({
    expect,
    t,
  }) => {
    const accountId = await createAccount(t.app)
    const created = await cli([
      'user',
      'create',
      '--email',
      'grace@example.com',
      '--password',
      'correct horse battery',
      '--name',
      'Grace Hopper',
      '--account',
      accountId,
      '--main',
    ])
    const user = created.json()
    expect(user).toMatchObject({ email: 'grace@example.com', first_name: 'Grace', last_name: 'Hopper' })
    expect(user.memberships).toEqual([expect.objectContaining({ account_id: accountId, main: true })])
    const read = await cli(['user', 'get', '--id', user._id as string])
    expect(read.json()).toEqual(await adminGet(t, `/users/${user._id}`))
    expect(read.json()).toMatchObject({ _id: user._id, email: 'grace@example.com' })
  })

  test('member add makes a user a member of another account', async ({ expect, t, owner }) => {
    const otherAccountId = await createAccount(t.app, { name: 'Other' })
    const run = await cli(['member', 'add', '--user', owner.userId, '--account', otherAccountId])
    expect(run.json()).toMatchObject({ user_id: owner.userId, account_id: otherAccountId, main: false })
    const user = await adminGet(t, `/users/${owner.userId}`)
    expect(user.memberships).toContainEqual(
      expect.objectContaining({ account_id: otherAccountId, main: false }),
    )
  })

  test("member remove ends a membership: the user's token is refused from then on", async ({ expect, t }) => {
    const colleague = await addUser(t.app, await createAccount(t.app, { name: 'Leaving' }))
    const run = await cli(['member', 'remove', '--user', colleague.userId, '--account', colleague.accountId])
    expect(run.json()).toEqual({ account_id: colleague.accountId, user_id: colleague.userId })
    expect((await adminGet(t, `/users/${colleague.userId}`)).memberships).toEqual([])
    expect((await t.app.inject({ url: '/v1/contacts', headers: colleague.headers })).statusCode).toBe(401)
    const again = await cli([
      'member',
      'remove',
      '--user',
      colleague.userId,
      '--account',
      colleague.accountId,
    ])
    expect(again.stderr).toContain('User is not a member of this account')
  })

  test('user permissions grants and takes away platform-wide permissions, checked by the API', async ({
    expect,
    t,
    bystander,
  }) => {
    const granted = await cli([
      'user',
      'permissions',
      '--id',
      bystander.userId,
      '--permission',
      'funnel_templates:admin',
    ])
    expect(granted.json()).toMatchObject({ _id: bystander.userId, permissions: ['funnel_templates:admin'] })
    expect((await adminGet(t, `/users/${bystander.userId}`)).permissions).toEqual(['funnel_templates:admin'])
    const unknown = await cli(['user', 'permissions', '--id', bystander.userId, '--permission', 'root'])
    expect(unknown.code).not.toBe(0)
    expect(unknown.stderr).toContain('permissions[0] must be one of: funnel_templates:admin')
    const cleared = await cli(['user', 'permissions', '--id', bystander.userId])
    expect(cleared.json()).toMatchObject({ permissions: [] })
  })

  test('contact create prints the contact, which the admin API then reads', async ({ expect, t }) => {
    const accountId = await createAccount(t.app)
    const run = await cli([
      'contact',
      'create',
      '--account',
      accountId,
      '--email',
      'lead@example.com',
      '--name',
      'Lead',
      '--phone',
      '+15550100',
    ])
    const contact = run.json()
    expect(contact).toMatchObject({ account_id: accountId, email: 'lead@example.com', phone: '+15550100' })
    expect(await adminGet(t, `/accounts/${accountId}/contacts/${contact._id}`)).toEqual(contact)
  })

  test('credits grant adds once per reference and credits balance reads the balance', async ({
    expect,
    t,
  }) => {
    const accountId = await createAccount(t.app)
    const grant = ['credits', 'grant', '--account', accountId, '--amount', '40', '--reference', 'invoice-1']
    const [first, second] = await Promise.all([cli(grant), cli(grant)])
    expect([first.code, second.code]).toEqual([0, 0])
    expect(first.json()).toMatchObject({ account_id: accountId })
    const balance = await cli(['credits', 'balance', '--account', accountId])
    expect(balance.json()).toEqual({ account_id: accountId, balance: 40 })
    expect(await adminGet(t, `/accounts/${accountId}/credits`)).toEqual({
      account_id: accountId,
      balance: 40,
    })
  })

  test('mail-subuser set and support-inbox create provision the email area', async ({ expect, t }) => {
    const accountId = await createAccount(t.app)
    const subuser = await cli([
      'mail-subuser',
      'set',
      '--account',
      accountId,
      '--username',
      'acme-mail',
      '--api-key',
      'SG.secret-key',
    ])
    expect(subuser.code).toBe(0)
    expect(subuser.json()).toMatchObject({ account_id: accountId, username: 'acme-mail', api_key_set: true })
    expect(subuser.stdout).not.toContain('SG.secret-key')

    const inbox = await cli(['support-inbox', 'create', '--account', accountId, '--type', 'email_inbound'])
    expect(inbox.code).toBe(2)
    expect(inbox.stderr).toContain('--name')
    const created = await cli([
      'support-inbox',
      'create',
      '--account',
      accountId,
      '--type',
      'email_inbound',
      '--name',
      'Replies',
      '--default',
    ])
    expect(created.json()).toMatchObject({
      account_id: accountId,
      type: 'email_inbound',
      name: 'Replies',
      is_default: true,
    })
  })

  test('app create registers an OAuth app and prints its client id and secret; the app commands manage it', async ({
    expect,
  }) => {
    const created = await cli([
      'app',
      'create',
      '--name',
      'Reporting Hub',
      '--redirect-uri',
      'https://hub.example.com/cb',
      '--redirect-uri',
      'http://127.0.0.1:8765/cb',
      '--scopes',
      'crm.contacts.read  analytics.read',
      '--webhook-url',
      'https://hub.example.com/hooks',
    ])
    expect(created.stderr).toBe('')
    const app = created.json()
    expect(app).toMatchObject({
      client_id: app._id,
      client_secret: expect.stringMatching(/^[\w-]{43}$/),
      webhook_secret: expect.stringMatching(/^whsec_[\w+/]{43}=$/),
      redirect_uris: ['https://hub.example.com/cb', 'http://127.0.0.1:8765/cb'],
      scopes: ['crm.contacts.read', 'analytics.read'],
      active: false,
      public: false,
    })
    const appId = app._id as string
    expect((await cli(['app', 'get', '--id', appId])).json()).toMatchObject({
      _id: appId,
      name: 'Reporting Hub',
    })
    const listed = (await cli(['app', 'list', '--limit', '100'])).json().apps as { _id: string }[]
    expect(listed.map((a) => a._id)).toContain(appId)
    expect((await cli(['app', 'activate', '--id', appId])).json()).toMatchObject({ active: true })
    const updated = await cli(['app', 'update', '--id', appId, '--scopes', 'sites.read', '--name', 'Hub'])
    expect(updated.json()).toMatchObject({ name: 'Hub', scopes: ['sites.read'], active: true })
    const rotated = (await cli(['app', 'rotate-secret', '--id', appId])).json()
    expect(rotated).toEqual({ client_id: appId, client_secret: expect.stringMatching(/^[\w-]{43}$/) })
    expect(rotated.client_secret).not.toBe(app.client_secret)
    const signing = (await cli(['app', 'rotate-webhook-secret', '--id', appId])).json()
    expect(signing).toEqual({ client_id: appId, webhook_secret: expect.stringMatching(/^whsec_/) })
    expect(signing.webhook_secret).not.toBe(app.webhook_secret)

    const noUri = await cli(['app', 'create', '--name', 'X', '--scopes', 'sites.read'])
    expect(noUri.code).toBe(2)
    expect(noUri.stderr).toContain('--redirect-uri')
    const badUri = await cli([
      'app',
      'create',
      '--name',
      'X',
      '--scopes',
      'sites.read',
      '--redirect-uri',
      'http://x.example/cb',
    ])
    expect(badUri.code).toBe(1)
    expect(badUri.stderr).toContain('redirect_uris[0] must use https, or http on a loopback address')
  })

  test('token prints a platform JWT that the API accepts', async ({ expect, t, owner }) => {
    const run = await cli(['token', '--user', owner.userId, '--account', owner.accountId, '--ttl', '600'])
    const printed = run.json()
    expect(Object.keys(printed)).toEqual(['token'])
    const posts = await t.app.inject({
      method: 'GET',
      url: '/v1/e/changelog/posts',
      headers: bearer(printed.token as string),
    })
    expect(posts.statusCode).toBe(200)
  })

  test('quickstart creates an account, its main user and a working token', async ({ expect, t }) => {
    const run = await cli(['quickstart'])
    const printed = run.json()
    expect(Object.keys(printed).sort()).toEqual(['account_id', 'email', 'password', 'token', 'user_id'])
    expect((await adminGet(t, `/accounts/${printed.account_id}`)).name).toBe('Demo account')
    const user = await adminGet(t, `/users/${printed.user_id}`)
    expect(user.email).toBe(printed.email)
    expect(user.memberships).toEqual([
      expect.objectContaining({ account_id: printed.account_id, main: true }),
    ])
    const posts = await t.app.inject({
      method: 'GET',
      url: '/v1/e/changelog/posts',
      headers: bearer(printed.token as string),
    })
    expect(posts.statusCode).toBe(200)
  })

  test('account export writes the NDJSON to stdout or to --out FILE, and no file for an unknown account', async ({
    expect,
    t,
  }) => {
    // An account of its own: the file's other tests, running alongside, add rows to the shared ones.
    const accountId = await createAccount(t.app)
    const toStdout = await cli(['account', 'export', '--id', accountId])
    expect(toStdout.stderr).toBe('')
    expect(toStdout.code).toBe(0)
    const lines = toStdout.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(lines[0].export).toMatchObject({ account_id: accountId })
    expect(lines.at(-1).export_end.rows).toBe(lines.length - 2)

    const folder = mkdtempSync(join(tmpdir(), 'cli-export-'))
    const file = join(folder, 'account.ndjson')
    const toFile = await cli(['account', 'export', '--id', accountId, '--out', file])
    expect(toFile.json()).toEqual({ file, rows: lines.length - 2 })
    expect(readFileSync(file, 'utf8').trimEnd().split('\n')).toHaveLength(lines.length)

    const refused = join(folder, 'unknown.ndjson')
    const unknown = await cli(['account', 'export', '--id', UNKNOWN_ID, '--out', refused])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(
      `error: Account not found (HTTP 404 from GET /v1/admin/accounts/${UNKNOWN_ID}/export)\n`,
    )
    expect(existsSync(refused)).toBe(false)
  })

  test('account remove queues the removal, account removal reads its progress, and an unknown account exits 1', async ({
    expect,
    t,
  }) => {
    const accountId = await createAccount(t.app, { name: 'Removed from the CLI' })
    const removed = await cli(['account', 'remove', '--id', accountId])
    expect(removed.stderr).toBe('')
    expect(removed.code).toBe(0)
    expect(removed.json()).toMatchObject({ account_id: accountId, status: 'queued', rows_deleted: 0 })
    // Refused from the DELETE on, whether the job has deleted its rows yet or not.
    const update = await cli(['account', 'update', '--id', accountId, '--name', 'Too late'])
    expect(update.code).toBe(1)
    expect(update.stderr).toContain('Account is removed: it can no longer be changed (HTTP 409')

    const progress = await cli(['account', 'removal', '--id', accountId])
    expect(progress.code).toBe(0)
    expect(progress.json()).toMatchObject({ account_id: accountId, sub_account_ids: [] })
    expect(['queued', 'running', 'done']).toContain(progress.json().status)
    expect(progress.json().tables).toEqual(
      expect.arrayContaining([expect.objectContaining({ table: 'accounts' })]),
    )

    const unknown = await cli(['account', 'removal', '--id', UNKNOWN_ID])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toBe(
      `error: No removal of this account (HTTP 404 from GET /v1/admin/accounts/${UNKNOWN_ID}/removal)\n`,
    )
  })

  test('rejects bad arguments with exit 2 and a message naming the flag, before calling the API', async ({
    expect,
  }) => {
    const unreachable = { PLATFORM_URL: `http://127.0.0.1:${await freePort()}` }
    const [missing, zero, notNumber, badTtl, unknownCommand, unknownFlag, badId] = await Promise.all([
      cli(['account', 'create', '--tier', 'pro'], unreachable),
      cli(['credits', 'grant', '--account', UNKNOWN_ID, '--amount', '0'], unreachable),
      cli(['credits', 'grant', '--account', UNKNOWN_ID, '--amount', 'ten'], unreachable),
      cli(['token', '--user', UNKNOWN_ID, '--account', UNKNOWN_ID, '--ttl', '1.5'], unreachable),
      cli(['accounts', 'create'], unreachable),
      cli(['account', 'get', '--id', UNKNOWN_ID, '--verbose'], unreachable),
      cli(['account', 'get', '--id', 'nope'], unreachable),
    ])
    for (const run of [missing, zero, notNumber, badTtl, unknownCommand, unknownFlag, badId]) {
      expect(run.code, run.stderr).toBe(2)
      expect(run.stdout).toBe('')
    }
    // One line saying what is wrong, then how the command is written.
    const usageOf = {
      'account create': [missing],
      'credits grant': [zero, notNumber],
      token: [badTtl],
      'account get': [unknownFlag, badId],
    }
    for (const [name, runs] of Object.entries(usageOf)) {
      for (const run of runs) {
        const lines = run.stderr.trimEnd().split('\n')
        expect(lines).toHaveLength(2)
        expect(lines[1]).toMatch(new RegExp(`^Usage: npm run cli -- ${name} --`))
      }
    }
    expect(missing.stderr).toContain('missing required flag --name')
    expect(zero.stderr).toContain('--amount must be a positive integer')
    expect(notNumber.stderr).toContain('--amount must be a positive integer')
    expect(badTtl.stderr).toContain('--ttl must be a positive integer')
    expect(unknownCommand.stderr).toBe(
      'error: unknown command "accounts create": did you mean "account create"?\n',
    )
    expect(unknownFlag.stderr).toBe(
      'error: unknown option --verbose\nUsage: npm run cli -- account get --id ID\n',
    )
    expect(badId.stderr).toContain('--id must be a 24-character')
  })

  test('names the command or flag a typing slip meant, and none for a word nothing is near', async ({
    expect,
  }) => {
    const unreachable = { PLATFORM_URL: `http://127.0.0.1:${await freePort()}` }
    const [quikstart, nam, unrelated] = await Promise.all([
      cli(['quikstart'], unreachable),
      cli(['account', 'create', '--nam', 'Acme'], unreachable),
      cli(['deploy'], unreachable),
    ])
    expect(quikstart.stderr).toBe('error: unknown command "quikstart": did you mean "quickstart"?\n')
    expect(nam.stderr.split('\n')[0]).toBe('error: unknown option --nam; did you mean --name?')
    expect(unrelated.stderr).toBe('error: unknown command "deploy"; run with --help for the list\n')
    for (const run of [quikstart, nam, unrelated]) expect(run.code).toBe(2)
  })

  test("quickstart without PLATFORM_URL reaches the server on the PORT and HOST of the server's .env", async ({
    expect,
  }) => {
    const cwd = mkdtempSync(join(tmpdir(), 'platform-cli-'))
    // The server listens on every address (HOST=0.0.0.0): the CLI goes to this machine's loopback.
    writeFileSync(join(cwd, '.env'), `PORT=${new URL(platformUrl).port}\nHOST=0.0.0.0\n`)
    const run = await runScript(
      'cli',
      ['quickstart'],
      { PLATFORM_URL: undefined, PORT: undefined, HOST: undefined, ADMIN_TOKEN: TEST_ADMIN_TOKEN },
      cwd,
    )
    expect(run.stderr).toBe('')
    expect(Object.keys(run.json())).toContain('token')
  })

  test('refuses an unquoted multi-line PEM in .env, naming its variable, as the server does', async ({
    expect,
  }) => {
    const cwd = mkdtempSync(join(tmpdir(), 'platform-cli-'))
    writeFileSync(
      join(cwd, '.env'),
      'JWT_PUBLIC_KEY=-----BEGIN PUBLIC KEY-----\nMFkwEwYH\n-----END PUBLIC KEY-----\n',
    )
    const run = await runScript('cli', ['quickstart'], { PLATFORM_URL: undefined }, cwd)
    expect(run.code).toBe(1)
    expect(run.stderr).toBe(
      "error: JWT_PUBLIC_KEY in .env is a PEM on several lines without quotes, of which Node's .env reader keeps the first only: put the value in double quotes, as .env.example shows\n",
    )
  })

  test('prints usage for --help and for no command', async ({ expect }) => {
    const [help, bare] = await Promise.all([cli(['--help']), cli([])])
    for (const run of [help, bare]) {
      expect(run.code).toBe(0)
      expect(run.stdout).toContain('account create --name NAME [--parent ID]')
      expect(run.stdout).toContain('quickstart [--name NAME]')
    }
  })

  test('help, help <command>, <command> --help and --version print without a server', async ({ expect }) => {
    const unreachable = { PLATFORM_URL: `http://127.0.0.1:${await freePort()}` }
    const [help, helpOf, commandHelp, version, unknown] = await Promise.all([
      cli(['help'], unreachable),
      cli(['help', 'account', 'list'], unreachable),
      cli(['account', 'get', '--help'], unreachable),
      cli(['--version'], unreachable),
      cli(['help', 'acount', 'list'], unreachable),
    ])
    for (const run of [help, helpOf, commandHelp, version]) expect(run.code, run.stderr).toBe(0)
    expect(help.stdout).toContain(
      'account list [--name NAME] [--status active|suspended|removed] [--parent ID]',
    )
    expect(help.stdout).toContain('user reset-password --id ID [--password PASSWORD]')
    // A command's help is its own, not the list of every command.
    expect(commandHelp.stdout).not.toContain('Commands:')
    expect(commandHelp.stdout.split('\n').slice(0, 3)).toEqual([
      'Usage: npm run cli -- account get --id ID',
      '',
      'Read an account',
    ])
    expect(helpOf.stdout).toMatch(/^Usage: npm run cli -- account list \[--name NAME\]/)
    const { version: expected } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
    expect(version.stdout).toBe(`${expected}\n`)
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toBe('error: unknown command "acount list": did you mean "account list"?\n')
  })

  test('takes a negative number as a flag value, for the flag to judge, and refuses an unknown --format', async ({
    expect,
  }) => {
    const unreachable = { PLATFORM_URL: `http://127.0.0.1:${await freePort()}` }
    const [negative, format] = await Promise.all([
      cli(['credits', 'grant', '--account', UNKNOWN_ID, '--amount', '-5'], unreachable),
      cli(['account', 'list', '--format', 'xml'], unreachable),
    ])
    expect(negative.code).toBe(2)
    expect(negative.stderr.split('\n')[0]).toBe('error: --amount must be a positive integer')
    expect(format.code).toBe(2)
    expect(format.stderr).toBe('error: --format must be one of json, table\n')
  })

  test('account list finds accounts by name, status and parent, page by page with --cursor; --format table for people', async ({
    expect,
    t,
  }) => {
    const prefix = `cli${randomBytes(4).toString('hex')}`
    const parent = await createAccount(t.app, { name: `${prefix} agency` })
    for (const name of ['c', 'a', 'b'])
      await createAccount(t.app, { name: `${prefix} ${name}`, parent_account: parent })
    await createAccount(t.app, { name: `${prefix} d`, parent_account: parent, status: 'suspended' })

    const first = await cli(['account', 'list', '--name', prefix.toUpperCase(), '--limit', '3'])
    expect(first.stderr).toBe('')
    const page = first.json() as { accounts: { name: string }[]; next_cursor: string }
    expect(page.accounts.map((account) => account.name)).toEqual([
      `${prefix} a`,
      `${prefix} agency`,
      `${prefix} b`,
    ])
    const rest = (
      await cli(['account', 'list', '--name', prefix, '--limit', '3', '--cursor', page.next_cursor])
    ).json()
    expect((rest.accounts as { name: string }[]).map((account) => account.name)).toEqual([
      `${prefix} c`,
      `${prefix} d`,
    ])
    expect(rest.next_cursor).toBeNull()
    const suspended = (await cli(['account', 'list', '--parent', parent, '--status', 'suspended'])).json()
    expect(suspended.accounts).toEqual([
      expect.objectContaining({ name: `${prefix} d`, parent_account: parent }),
    ])

    const table = await cli(['account', 'list', '--parent', parent, '--format', 'table'])
    expect(table.code).toBe(0)
    const lines = table.stdout.trimEnd().split('\n')
    expect(lines[0]).toMatch(/^_id +name +parent_account +status +tier/)
    expect(lines[1]).toMatch(/^-+ +-+/)
    expect(lines.slice(2, 6).map((line) => line.split(/ {2,}/)[1])).toEqual(
      ['a', 'b', 'c', 'd'].map((letter) => `${prefix} ${letter}`),
    )
    expect(lines.at(-1)).toBe('next_cursor:')
  })

  test('user find, user reset-password (generated or given) and user remove, after which every token of the user is refused', async ({
    expect,
    t,
  }) => {
    const accountId = await createAccount(t.app, { name: 'Cli Co' })
    const user = await addUser(t.app, accountId)
    const email = (await adminGet(t, `/users/${user.userId}`)).email as string
    const found = await cli(['user', 'find', '--email', email.toUpperCase()])
    expect(found.json()).toEqual({
      _id: user.userId,
      email,
      name: 'Ada Lovelace',
      accounts: [{ _id: accountId, name: 'Cli Co', main: true }],
    })
    const shown = await cli(['user', 'find', '--email', email, '--format', 'table'])
    expect(shown.stdout).toMatch(new RegExp(`^field +value\n-+ +-+\n_id +${user.userId}\n`))

    const generated = (await cli(['user', 'reset-password', '--id', user.userId])).json()
    expect(generated).toEqual({ _id: user.userId, password: expect.stringMatching(/^[\w-]{24}$/) })
    const given = await cli([
      'user',
      'reset-password',
      '--id',
      user.userId,
      '--password',
      'chosen by the operator',
    ])
    expect(given.json()).toEqual({ _id: user.userId, password: null })

    // The reset ended the user's sessions; a token issued from the next second on opens the account again.
    expect((await t.app.inject({ url: '/v1/contacts', headers: user.headers })).statusCode).toBe(401)
    // As the main platform would mint it, a second after the reset (iat has no finer grain).
    const fresh = bearer(
      await new SignJWT({ uid: user.userId, account_id: accountId, parent_account: null })
        .setProtectedHeader({ alg: 'HS256' })
        .setIssuedAt(Math.floor(Date.now() / 1000) + 1)
        .setExpirationTime('10m')
        .sign(new TextEncoder().encode(TEST_JWT_SECRET)),
    )
    expect((await t.app.inject({ url: '/v1/contacts', headers: fresh })).statusCode).toBe(200)
    const removed = await cli(['user', 'remove', '--id', user.userId])
    expect(removed.json()).toEqual({
      _id: user.userId,
      removed_at: expect.any(String),
      account_ids: [accountId],
    })
    expect((await t.app.inject({ url: '/v1/contacts', headers: fresh })).statusCode).toBe(401)
    const [again, gone] = await Promise.all([
      cli(['user', 'remove', '--id', user.userId]),
      cli(['user', 'find', '--email', email]),
    ])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain(`User not found (HTTP 404 from DELETE /v1/admin/users/${user.userId})`)
    expect(gone.code).toBe(1)
    expect(gone.stderr).toBe(`error: no user has the email ${email}\n`)
  })

  test('reports API errors, a wrong admin token and an unreachable server on one line of stderr', async ({
    expect,
  }) => {
    const [unknownAccount, wrongToken, unreachable] = await Promise.all([
      cli(['account', 'get', '--id', UNKNOWN_ID]),
      cli(['account', 'get', '--id', UNKNOWN_ID], { ADMIN_TOKEN: 'not-the-admin-token' }),
      cli(['account', 'get', '--id', UNKNOWN_ID], { PLATFORM_URL: `http://127.0.0.1:${await freePort()}` }),
    ])
    for (const run of [unknownAccount, wrongToken, unreachable]) {
      expect(run.code).toBe(1)
      expect(run.stdout).toBe('')
      expect(run.stderr.trimEnd().split('\n')).toHaveLength(1)
    }
    expect(unknownAccount.stderr).toContain(
      `Account not found (HTTP 404 from GET /v1/admin/accounts/${UNKNOWN_ID})`,
    )
    expect(wrongToken.stderr).toContain('HTTP 401')
    expect(wrongToken.stderr).toContain('ADMIN_TOKEN')
    expect(unreachable.stderr).toContain('cannot reach the platform at http://127.0.0.1:')
  })

  test('reads the admin token from DATA_DIR/secrets.json when ADMIN_TOKEN is unset', async ({
    expect,
    t,
  }) => {
    const withSecrets = mkdtempSync(join(tmpdir(), 'platform-cli-'))
    writeFileSync(join(withSecrets, 'secrets.json'), JSON.stringify({ adminToken: TEST_ADMIN_TOKEN }))
    const accountId = await createAccount(t.app, { name: 'Read with the generated token' })
    const [found, none] = await Promise.all([
      cli(['account', 'get', '--id', accountId], { ADMIN_TOKEN: undefined, DATA_DIR: withSecrets }),
      cli(['account', 'get', '--id', accountId], {
        ADMIN_TOKEN: undefined,
        DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-cli-')),
      }),
    ])
    expect(found.json()).toMatchObject({ _id: accountId, name: 'Read with the generated token' })
    expect(none.code).toBe(1)
    expect(none.stderr).toContain('set ADMIN_TOKEN, or start the server once')
  })

  test('db:migrate applies the migrations to the configured database, needing nothing of Redis', async ({
    expect,
    t,
  }) => {
    const env = t.database.url
      ? { DATABASE_URL: t.database.url }
      : { DATABASE_URL: undefined, DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-migrate-')) }
    const redisDown = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` }
    const run = await runScript('db:migrate', [], { ...env, ...redisDown, NODE_ENV: 'test' })
    expect(run.stderr).toBe('')
    expect(run.json()).toEqual({
      migrated: true,
      database: t.database.url ? 'postgres' : 'pglite',
      // The test's PostgreSQL database is migrated already; the embedded one is new.
      applied: t.database.url ? [] : readMigrations().map(({ tag }) => tag),
    })
  })
})
