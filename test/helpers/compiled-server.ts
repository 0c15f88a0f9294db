import { type ChildProcess, spawn } from 'node:child_process'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { npmScriptCommand } from './npm-scripts.js'
import { type WatchedProcess, watchProcess } from './processes.js'

/** How `npm start` starts the server, minus npm and its build: the compiled entry point. */
export const startCommand = npmScriptCommand('start')

/** The compiled server in `cwd` with exactly `env`, once it says it listens. */
export async function spawnServer(cwd: string, env: NodeJS.ProcessEnv): Promise<WatchedProcess> {
  const child = spawn(startCommand.command, startCommand.args, {
    cwd,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const server = watchProcess(child)
  await server.printed('listening on')
  return server
}

/** SIGTERM, and the exit code. */
export function stop(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code))
    child.kill('SIGTERM')
  })
}

/**
 * `app.inject` over real HTTP to a server in another process, as a browser or an app's client sends it: a
 * string payload as it is (a form), an object as JSON, redirects not followed (the OAuth pages redirect to
 * the app), and every cookie an answer sets in `set-cookie`. The OAuth and fixture helpers drive it as an app.
 */
export function overHttp(baseUrl: string): FastifyInstance {
  const inject = async ({ method = 'GET', url, headers = {}, payload }: InjectOptions) => {
    const json = payload !== undefined && typeof payload !== 'string'
    const response = await fetch(`${baseUrl}${url}`, {
      method,
      redirect: 'manual',
      headers: {
        ...(json && { 'content-type': 'application/json' }),
        ...(headers as Record<string, string>),
      },
      body: json ? JSON.stringify(payload) : (payload as string | undefined),
      signal: AbortSignal.timeout(30_000),
    })
    const body = await response.text()
    return {
      statusCode: response.status,
      headers: { ...Object.fromEntries(response.headers), 'set-cookie': response.headers.getSetCookie() },
      body,
      json: () => JSON.parse(body),
    }
  }
  return { inject } as unknown as FastifyInstance
}
