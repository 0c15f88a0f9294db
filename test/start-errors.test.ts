import { spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, it } from 'vitest'
import { probePostgres } from '../src/platform/db/connection.js'
import { freePort } from './helpers/app.js'
import { npmScriptCommand } from './helpers/npm-scripts.js'
import { PRODUCTION_ENV } from './helpers/production.js'

/** Generous: a start that fails should take about a second, but the machine may be busy. */
const EXIT_WITHIN_MS = 20_000
const PASSWORD = 'hunter2-never-printed'

type Entry = 'start' | 'worker' | 'db:migrate'

interface Case {
  /** What was tried. */
  tried: string
  entry: Entry
  /** The variable the one line must name, and anything else it must say. */
  names: string[]
  /** Settings over a bare machine's (HOST=127.0.0.1, a free PORT, a DATA_DIR of its own). */
  env: (setup: Setup) => Record<string, string>
  /** Written to the working directory's .env. */
  dotenv?: string
}

interface Setup {
  dataDir: string
  closedPort: number
  busyPort: number
}

interface Exit {
  code: number | null
  output: string
}

/** The compiled entry point in a working directory of its own, with only `settings` configuring it. */
function runToExit(entry: Entry, cwd: string, settings: Record<string, string>): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'JWT_SECRET', 'LOG_LEVEL']) {
    delete env[name]
  }
  const { command, args } = npmScriptCommand(entry)
  const child = spawn(command, args, { cwd, env: { ...env, ...settings }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout.on('data', collect)
  child.stderr.on('data', collect)
  const killer = setTimeout(() => child.kill('SIGKILL'), EXIT_WITHIN_MS)
  return new Promise((resolve, reject) => {
    child.once('error', reject)
    child.once('close', (code) => {
      clearTimeout(killer)
      resolve({ code, output })
    })
  })
}

const LOCAL_POSTGRES = 'postgres://postgres@127.0.0.1:5432/postgres'
const localPostgres = await probePostgres(LOCAL_POSTGRES, 2000).then(
  () => true,
  () => false,
)

const PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg
-----END PRIVATE KEY-----`

const cases: Case[] = [
  {
    tried: 'LOG_LEVEL=verbose',
    entry: 'start',
    names: ['LOG_LEVEL', '"verbose"', 'fatal, error, warn, info, debug, trace, silent'],
    env: () => ({ LOG_LEVEL: 'verbose' }),
  },
  {
    tried: 'TRUST_PROXY=maybe',
    entry: 'start',
    names: ['TRUST_PROXY', '"maybe"', 'loopback'],
    env: () => ({ TRUST_PROXY: 'maybe' }),
  },
  {
    tried: 'ADMIN_TOKEN=pw in production',
    entry: 'start',
    names: ['ADMIN_TOKEN must be at least 32 characters in production'],
    env: () => ({ ...PRODUCTION_ENV, ADMIN_TOKEN: 'pw' }),
  },
  {
    tried: 'PORT=abc',
    entry: 'start',
    names: ['PORT must be an integer from 0 to 65535, got "abc"'],
    env: () => ({ PORT: 'abc' }),
  },
  {
    tried: 'HOST=999.1.1.1',
    entry: 'start',
    names: ['HOST "999.1.1.1"'],
    env: () => ({ HOST: '999.1.1.1' }),
  },
  {
    tried: 'a port another process listens on',
    entry: 'start',
    names: ['PORT', 'in use by another process'],
    env: ({ busyPort }) => ({ PORT: String(busyPort) }),
  },
  {
    tried: 'a METRICS_PORT another process listens on',
    entry: 'start',
    names: ['METRICS_PORT', 'in use by another process'],
    env: ({ busyPort }) => ({ METRICS_PORT: String(busyPort) }),
  },
  {
    tried: 'DATABASE_URL on a closed port',
    entry: 'start',
    names: ['DATABASE_URL', 'connection refused'],
    env: ({ closedPort }) => ({
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${closedPort}/app`,
    }),
  },
  {
    tried: 'DATABASE_URL on a closed port, for the worker',
    entry: 'worker',
    names: ['DATABASE_URL', 'connection refused'],
    env: ({ closedPort }) => ({
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${closedPort}/app`,
    }),
  },
  {
    tried: 'REDIS_URL on a closed port',
    entry: 'start',
    names: ['REDIS_URL', 'connection refused'],
    env: ({ closedPort }) => ({ REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${closedPort}` }),
  },
  {
    tried: 'neither DATABASE_URL nor REDIS_URL reachable',
    entry: 'start',
    names: ['DATABASE_URL', 'REDIS_URL'],
    env: ({ closedPort }) => ({
      DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:${closedPort}/app`,
      REDIS_URL: `redis://:${PASSWORD}@127.0.0.1:${closedPort}`,
    }),
  },
  {
    tried: 'db:migrate while another process holds the embedded database',
    entry: 'db:migrate',
    names: ['is in use by process', String(process.pid)],
    // This test's own process, alive, as the holder a running server would be.
    env: ({ dataDir }) => {
      mkdirSync(dataDir, { recursive: true })
      writeFileSync(join(dataDir, 'pglite.lock'), String(process.pid))
      return {}
    },
  },
  {
    tried: 'a multi-line PEM in .env without quotes',
    entry: 'start',
    names: ['OAUTH_SIGNING_KEY', 'double quotes', '.env.example'],
    env: () => ({}),
    dotenv: `OAUTH_SIGNING_KEY=${PEM}\nPUBLIC_BASE_URL=http://127.0.0.1:3000\n`,
  },
]

describe.concurrent('a start with a setup mistake says so in one line and exits 1', () => {
  let busy: Server
  let setup: Omit<Setup, 'dataDir'>
  beforeAll(async () => {
    busy = createServer()
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve))
    setup = { busyPort: (busy.address() as { port: number }).port, closedPort: await freePort() }
  })
  afterAll(() => new Promise((resolve) => busy.close(resolve)))

  const missingDatabase = `no_such_database_${randomBytes(4).toString('hex')}`
  const withLocalPostgres: Case = {
    tried: localPostgres
      ? 'DATABASE_URL naming a database the server lacks'
      : `DATABASE_URL naming a missing database (skipped: no PostgreSQL answers at ${LOCAL_POSTGRES})`,
    entry: 'start',
    names: ['DATABASE_URL', `127.0.0.1:5432/${missingDatabase}`, 'does not exist'],
    env: () => ({ DATABASE_URL: `postgres://postgres:${PASSWORD}@127.0.0.1:5432/${missingDatabase}` }),
  }

  it.for([...cases, withLocalPostgres])('$tried', async (row, { expect, skip }) => {
    if (row === withLocalPostgres && !localPostgres) skip()
    const cwd = mkdtempSync(join(tmpdir(), 'platform-start-error-'))
    const dataDir = join(cwd, 'data')
    if (row.dotenv) writeFileSync(join(cwd, '.env'), row.dotenv)
    const settings = { HOST: '127.0.0.1', PORT: String(await freePort()), DATA_DIR: dataDir }
    const { code, output } = await runToExit(row.entry, cwd, {
      ...settings,
      ...row.env({ ...setup, dataDir }),
    })

    const lines = output.split('\n').filter((line) => line.trim() !== '')
    expect(lines, output).toHaveLength(1)
    expect(code).toBe(1)
    for (const name of row.names) expect(lines[0]).toContain(name)
    expect(output).not.toMatch(/^\s+at /m)
    expect(output).not.toContain(PASSWORD)
  })
})
