import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise((resolve) => server.close(resolve))
  return port
}

interface Started {
  child: ChildProcess
  output: () => string
}

/** The caller's environment without anything that configures the service: a bare machine. */
function bareEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HOST: '127.0.0.1', LOG_LEVEL: 'warn', ...settings }
  for (const name of ['NODE_ENV', 'DATABASE_URL', 'REDIS_URL', 'ADMIN_TOKEN', 'JWT_SECRET']) {
    if (!(name in settings)) delete env[name]
  }
  return env
}

/** `npm start` as a newcomer runs it (minus npm): the real entry point, on the embedded database. */
async function start(dataDir: string, port: number, settings: Record<string, string> = {}): Promise<Started> {
  const env = bareEnv({ DATA_DIR: dataDir, PORT: String(port), ...settings })
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  const collect = (chunk: Buffer) => {
    output += chunk.toString()
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  const deadline = Date.now() + 45_000
  while (!output.includes('listening on')) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start:\n${output}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { child, output: () => output }
}

function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code))
    child.kill('SIGTERM')
  })
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

    const rival = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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

describe('npm start in production', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it('refuses to start half-configured, naming every missing variable in one message', () => {
    const refused = spawnSync(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
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
      'Configuration error: NODE_ENV=production needs these set: SECRETS_ENCRYPTION_KEY, OAUTH_SIGNING_KEY, EDGE_SIGNING_SECRET, PUBLIC_BASE_URL',
    )
  }, 60_000)

  it('starts fully configured, warns once that it runs on the embedded database, and publishes its key', async () => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-start-'))
    const server = await start(dataDir, port, {
      NODE_ENV: 'production',
      ADMIN_TOKEN: 'a'.repeat(24),
      JWT_SECRET: 's'.repeat(32),
      SECRETS_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      OAUTH_SIGNING_KEY: generateKeyPairSync('ec', { namedCurve: 'P-256' })
        .privateKey.export({ type: 'pkcs8', format: 'pem' })
        .toString(),
      EDGE_SIGNING_SECRET: randomBytes(32).toString('hex'),
      PUBLIC_BASE_URL: 'https://api.example.com',
    })
    running.push(server.child)
    const jwks = (await (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json()) as {
      keys: unknown[]
    }
    expect(jwks.keys).toHaveLength(1)
    expect(await stop(server.child)).toBe(0)
    const warnings = server
      .output()
      .match(/DATABASE_URL is not set: production runs on the embedded database/g)
    expect(warnings).toHaveLength(1)
    expect(existsSync(join(dataDir, 'secrets.json'))).toBe(false)
  }, 120_000)
})
