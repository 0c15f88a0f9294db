import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from './helpers/app.js'
import { npmScriptCommand } from './helpers/npm-scripts.js'
import { type WatchedProcess, watchProcess } from './helpers/processes.js'

const running: ChildProcess[] = []
afterAll(() => {
  for (const child of running) child.kill('SIGKILL')
})

/** `npm run <script>` minus npm and its build, at LOG_LEVEL=info, until its output says `ready`. */
async function run(script: string, env: Record<string, string>, ready: string): Promise<WatchedProcess> {
  const dataDir = mkdtempSync(join(tmpdir(), 'platform-logs-'))
  const { command, args } = npmScriptCommand(script)
  const child = spawn(command, args, {
    cwd: dataDir,
    env: { PATH: process.env.PATH, DATA_DIR: dataDir, LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.push(child)
  const watched = watchProcess(child)
  await watched.printed(ready)
  return watched
}

/** The process's pino lines (the start banner is plain text). */
function logLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line))
}

describe('the log an operator reads', () => {
  it('says once that the server listens, even on every address, and one line per request', async () => {
    const port = await freePort()
    const server = await run('start', { HOST: '0.0.0.0', PORT: String(port) }, 'listening on')
    const answer = await fetch(`http://127.0.0.1:${port}/status`, { headers: { 'x-request-id': 'op-1' } })
    expect(answer.status).toBe(200)
    server.child.kill('SIGTERM')
    expect(await server.exited).toBe(0)

    const lines = logLines(server.output())
    expect(lines.filter(({ msg }) => String(msg).startsWith('Server listening'))).toEqual([
      expect.objectContaining({ msg: `Server listening on 0.0.0.0:${port}` }),
    ])
    expect(lines.filter(({ reqId }) => reqId === 'op-1')).toEqual([
      expect.objectContaining({
        method: 'GET',
        route: '/status',
        status: 200,
        msg: expect.stringMatching(/^GET \/status 200 /),
      }),
    ])
  }, 60_000)

  it('has the worker speak of its jobs on SIGTERM, not of a readiness it does not serve', async () => {
    const worker = await run('worker', {}, 'Job workers started')
    worker.child.kill('SIGTERM')
    expect(await worker.exited).toBe(0)
    const messages = logLines(worker.output()).map(({ msg }) => String(msg))
    expect(messages).toContain('SIGTERM: finishing running jobs, then closing')
    expect(messages.join('\n')).not.toMatch(/readiness|serving/)
  }, 60_000)
})
