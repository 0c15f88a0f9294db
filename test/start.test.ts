import { type ChildProcess, spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
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

/** `npm start` as a newcomer runs it (minus npm): the real entry point, on the embedded database. */
async function start(dataDir: string, port: number): Promise<Started> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
  }
  delete env.DATABASE_URL
  delete env.REDIS_URL
  delete env.ADMIN_TOKEN
  delete env.JWT_SECRET
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
