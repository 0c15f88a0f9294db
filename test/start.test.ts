import { type ChildProcess, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { networkInterfaces, tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterAll, describe, expect, it } from 'vitest'
import { pendingMigrationsOf } from '../src/platform/db/connection.js'
import { readMigrations } from '../src/platform/db/migrations.js'
import { freePort } from './helpers/app.js'
import { spawnServer, startCommand, stop } from './helpers/compiled-server.js'
import { createEmptyTestDatabase, createTestDatabase } from './helpers/database.js'
import { npmScriptCommand } from './helpers/npm-scripts.js'
import type { WatchedProcess } from './helpers/processes.js'
import { PRODUCTION_ENV } from './helpers/production.js'

/** The caller's environment without anything that configures the service: a bare machine. */
function bareEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'warn', ...settings }
  for (const name of [
    'NODE_ENV',
    'HOST',
    'DATABASE_URL',
    'REDIS_URL',
    'ADMIN_TOKEN',
    'JWT_SECRET',
    'PLATFORM_URL',
  ]) {
    if (!(name in settings)) delete env[name]
  }
  return env
}

/**
 * `npm start` as a newcomer runs it (minus npm and its build): the compiled entry point, on the embedded
 * database, in a working directory of its own (so no `.env` of the checkout is read).
 */
function start(
  dataDir: string,
  port: number,
  settings: Record<string, string> = {},
): Promise<WatchedProcess> {
  return spawnServer(dataDir, bareEnv({ DATA_DIR: dataDir, PORT: String(port), ...settings }))
}

describe('npm start on a bare machine', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'))
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it('starts with no configuration, refuses a second process on its data, stops cleanly on SIGTERM and keeps its data', async () => {
    const port = await freePort()
    const base = `http://127.0.0.1:${port}`
    const first = await start(dataDir, port)
    running.push(first.child)
    // The address printed is the default PUBLIC_BASE_URL, where the OAuth pages' forms post back.
    expect(first.output()).toContain(`Platform backend at ${base}, listening on 127.0.0.1:${port}`)
    expect(first.output()).toContain('npm run cli -- quickstart')

    const rival = spawnSync(startCommand.command, startCommand.args, {
      cwd: dataDir,
      env: { ...process.env, DATA_DIR: dataDir, PORT: String(await freePort()), DATABASE_URL: '' },
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(rival.status).toBe(1)
    expect(rival.stderr).toContain(`is in use by process ${first.child.pid}`)

    const { adminToken } = JSON.parse(readFileSync(join(dataDir, 'secrets.json'), 'utf8'))
    const created = await fetch(`${base}/v1/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survives restarts' }),
    })
    expect(created.status).toBe(201)
    const { _id } = ((await created.json()) as { data: { _id: string } }).data
    expect(await stop(first.child)).toBe(0)

    const second = await start(dataDir, port)
    running.push(second.child)
    const read = await fetch(`${base}/v1/admin/accounts/${_id}`, {
      headers: { authorization: `Bearer ${adminToken}` },
    })
    expect(((await read.json()) as { data: { name: string } }).data.name).toBe('Survives restarts')
    expect(await stop(second.child)).toBe(0)
  }, 120_000)
})

/** An IPv4 address of this machine other than loopback, if it has one. */
const otherAddress = Object.values(networkInterfaces())
  .flat()
  .find((address) => address?.family === 'IPv4' && !address.internal)?.address

/** Whether `host:port` takes a TCP connection from here. */
async function connects(host: string, port: number): Promise<boolean> {
  try {
    await fetch(`http://${host}:${port}/status`, { signal: AbortSignal.timeout(5000) })
    return true
  } catch {
    return false
  }
}

describe('npm start in development', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it.skipIf(!otherAddress)(
    "listens on 127.0.0.1 only, and its banner's CLI hint names its port and works from another terminal",
    async () => {
      const address = otherAddress as string
      const port = await freePort()
      const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'))
      const server = await start(dataDir, port)
      running.push(server.child)
      expect(server.output()).toContain(`listening on 127.0.0.1:${port}`)
      expect(await connects('127.0.0.1', port)).toBe(true)
      expect(await connects(address, port)).toBe(false)
      // The machine's other address takes connections where something listens on every address.
      const everywhere = createServer((socket) => socket.end('HTTP/1.1 204 No Content\r\n\r\n'))
      await new Promise<void>((resolve) => everywhere.listen(0, '0.0.0.0', resolve))
      expect(await connects(address, (everywhere.address() as { port: number }).port)).toBe(true)
      everywhere.close()

      // Port 3000 is where the CLI looks by default: the hint names this server's own address.
      const hint = /with: {2}PLATFORM_URL=(\S+) npm run cli -- quickstart\n/.exec(server.output())
      expect(hint?.[1]).toBe(`http://127.0.0.1:${port}`)
      // Another terminal: none of the server's settings but where its data is (its admin token).
      const cli = npmScriptCommand('cli')
      const quickstart = spawnSync(cli.command, [...cli.args, 'quickstart'], {
        cwd: mkdtempSync(join(tmpdir(), 'platform-terminal-')),
        env: bareEnv({ DATA_DIR: dataDir, PLATFORM_URL: hint?.[1] as string }),
        encoding: 'utf8',
        timeout: 60_000,
      })
      expect(quickstart.status, quickstart.stderr).toBe(0)
      expect(JSON.parse(quickstart.stdout.trim().split('\n').at(-1) as string)).toMatchObject({
        token: expect.any(String),
      })
      expect(await stop(server.child)).toBe(0)
    },
    120_000,
  )
})

describe('npm start with a .env file', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it('reads .env in its working directory, and the real environment wins over it', async () => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'))
    writeFileSync(
      join(dataDir, '.env'),
      ['# set by the operator', 'PUBLIC_BASE_URL=https://from-dotenv.example', `PORT=${port + 1}`, ''].join(
        '\n',
      ),
    )
    const server = await start(dataDir, port)
    running.push(server.child)
    expect(server.output()).toContain(
      `Platform backend at https://from-dotenv.example, listening on 127.0.0.1:${port}`,
    )
    expect(await stop(server.child)).toBe(0)
  }, 120_000)
})

describe('npm start in production', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it('refuses to start half-configured, naming every missing variable in one message', () => {
    const refused = spawnSync(startCommand.command, startCommand.args, {
      cwd: tmpdir(),
      env: bareEnv({
        NODE_ENV: 'production',
        DATA_DIR: mkdtempSync(join(tmpdir(), 'platform-start-')),
        ADMIN_TOKEN: 'a'.repeat(24),
        JWT_SECRET: 's'.repeat(32),
      }),
      encoding: 'utf8',
      timeout: 30_000,
    })
    expect(refused.status).toBe(1)
    expect(refused.stderr).toContain(
      "Configuration error: NODE_ENV=production needs these set: SECRETS_ENCRYPTION_KEY, OAUTH_SIGNING_KEY, PUBLIC_BASE_URL, TRUST_PROXY (the TLS proxy's addresses: OAuth and the providers' webhooks require the HTTPS it forwards)",
    )
  }, 60_000)
})

describe.skipIf(!process.env.DATABASE_URL)('npm start and the migrations of its PostgreSQL database', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  /** `npm run <entry>` run to its end with `settings` over a bare machine's environment. */
  function runToEnd(entry: 'start' | 'worker' | 'db:migrate', settings: Record<string, string>) {
    const { command, args } = npmScriptCommand(entry)
    return spawnSync(command, args, {
      cwd: tmpdir(),
      env: bareEnv(settings),
      encoding: 'utf8',
      timeout: 60_000,
    })
  }

  async function productionSettings(databaseUrl: string | undefined) {
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'))
    return {
      ...PRODUCTION_ENV,
      DATABASE_URL: databaseUrl ?? '',
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
    }
  }

  async function startsAndIsReady(settings: Record<string, string>) {
    const server = await spawnServer(tmpdir(), bareEnv(settings))
    running.push(server.child)
    const ready = await fetch(`http://127.0.0.1:${settings.PORT}/status/ready`)
    expect(ready.status).toBe(200)
    expect(await stop(server.child)).toBe(0)
    return server
  }

  it('in production, refuses a database that lacks migrations in one line naming npm run db:migrate, and starts once that ran', async () => {
    const database = await createEmptyTestDatabase()
    try {
      const settings = await productionSettings(database.url)
      const tags = readMigrations().map(({ tag }) => tag)
      for (const entry of ['start', 'worker'] as const) {
        const refused = runToEnd(entry, settings)
        expect(refused.status, refused.stderr).toBe(1)
        expect(refused.stdout + refused.stderr).toBe(
          `Cannot start: the database lacks ${tags.length} migration(s) of this release (${tags[0]} to ${tags.at(-1)}): apply them with \`npm run db:migrate\` before starting it\n`,
        )
      }
      // Refused, it applied nothing.
      expect(await pendingMigrationsOf(database.handle, { databaseUrl: database.url })).toEqual(tags)

      const migrated = runToEnd('db:migrate', settings)
      expect(migrated.status, migrated.stderr).toBe(0)
      await startsAndIsReady(settings)
    } finally {
      await database.drop()
    }
  }, 120_000)

  it('in production, starts on a database newer than its code (the next release migrated while it serves)', async () => {
    const database = await createTestDatabase()
    try {
      const newest = Math.max(...readMigrations().map(({ when }) => when))
      await database.handle.db.execute(
        sql`insert into drizzle.__drizzle_migrations (hash, created_at) values ('next release', ${newest + 1})`,
      )
      await startsAndIsReady(await productionSettings(database.url))
    } finally {
      await database.drop()
    }
  }, 120_000)

  it('in development, migrates the database as it starts', async () => {
    const database = await createEmptyTestDatabase()
    try {
      const { NODE_ENV, ...production } = await productionSettings(database.url)
      const server = await startsAndIsReady({ ...production, LOG_LEVEL: 'info' })
      expect(server.output()).toContain('migration 0034_')
      expect(await pendingMigrationsOf(database.handle, { databaseUrl: database.url })).toEqual([])
    } finally {
      await database.drop()
    }
  }, 120_000)
})
