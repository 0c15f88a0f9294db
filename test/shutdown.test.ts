import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { request } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from './helpers/app.js'
import { npmScriptCommand } from './helpers/npm-scripts.js'
import { watchProcess } from './helpers/processes.js'

const ADMIN_TOKEN = 'shutdown-test-admin-token'
const SHUTDOWN_DELAY_MS = 1500

interface Answer {
  status: number
  body: string
}

/** One request on a connection of its own; `body` may be sent in parts by `send`. */
function call(
  port: number,
  options: { method?: string; path: string; headers?: Record<string, string | number> },
  send: (write: (chunk: string) => void, end: () => void) => void = (_write, end) => end(),
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        agent: false,
        method: options.method ?? 'GET',
        path: options.path,
        headers: options.headers,
      },
      (res) => {
        let body = ''
        res.on('data', (chunk: Buffer) => {
          body += chunk.toString()
        })
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }))
      },
    )
    req.on('error', reject)
    send(
      (chunk) => req.write(chunk),
      () => req.end(),
    )
  })
}

describe('SIGTERM', () => {
  const running: ChildProcess[] = []
  afterAll(() => {
    for (const child of running) child.kill('SIGKILL')
  })

  it('turns readiness to 503, keeps serving for the delay, answers every accepted request, then exits 0', async () => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'platform-shutdown-'))
    const { command, args } = npmScriptCommand('start')
    const child = spawn(command, args, {
      cwd: dataDir,
      env: {
        PATH: process.env.PATH,
        HOST: '127.0.0.1',
        PORT: String(port),
        DATA_DIR: dataDir,
        ADMIN_TOKEN,
        LOG_LEVEL: 'info',
        SHUTDOWN_DELAY_MS: String(SHUTDOWN_DELAY_MS),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    running.push(child)
    const { exited, output, printed } = watchProcess(child)
    await printed('listening on')
    expect((await call(port, { path: '/status/ready' })).status).toBe(200)

    // A slow request: its body arrives in two parts, the second after the server has stopped accepting.
    const body = JSON.stringify({ name: 'Created while shutting down' })
    let finishSlowRequest: () => void = () => undefined
    const slow = call(
      port,
      {
        method: 'POST',
        path: '/v1/admin/accounts',
        headers: {
          authorization: `Bearer ${ADMIN_TOKEN}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (write, end) => {
        write(body.slice(0, 10))
        finishSlowRequest = () => {
          write(body.slice(10))
          end()
        }
      },
    )
    await new Promise((resolve) => setTimeout(resolve, 200))

    const signalled = Date.now()
    child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 100))
    // During the delay: readiness says no, and a burst of requests is served as usual.
    const ready = await call(port, { path: '/status/ready' })
    expect(ready.status).toBe(503)
    expect(JSON.parse(ready.body)).toEqual({ success: false, errno: 503, message: 'Shutting down' })
    const burst = await Promise.all(Array.from({ length: 40 }, () => call(port, { path: '/status' })))
    expect(burst.map(({ status }) => status)).toEqual(Array(40).fill(200))

    // After the delay the server accepts no new connection, but finishes the request in flight.
    while (Date.now() - signalled < SHUTDOWN_DELAY_MS + 500) {
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    await expect(call(port, { path: '/status' })).rejects.toMatchObject({ code: 'ECONNREFUSED' })
    finishSlowRequest()
    const created = await slow
    expect(created.status).toBe(201)
    expect(JSON.parse(created.body).data.name).toBe('Created while shutting down')

    expect(await exited).toBe(0)
    expect(Date.now() - signalled).toBeLessThan(SHUTDOWN_DELAY_MS + 10_000)
    expect(output()).toContain('SIGTERM: readiness answers 503')
  }, 60_000)
})
