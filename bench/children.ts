import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createServer } from 'node:net'
import { setTimeout as delay } from 'node:timers/promises'

const OUTPUT_TAIL_CHARS = 8_000
const STOP_GRACE_MS = 5_000
const POLL_INTERVAL_MS = 100
const PROBE_TIMEOUT_MS = 1_000

/** A Node.js child process with the tail of what it printed, for error messages. */
export interface Child {
  name: string
  process: ChildProcess
  /** Resolves when the process has ended (or could not start). */
  exited: Promise<void>
  hasExited(): boolean
  output(): string
}

export interface StartOptions {
  cwd: string
  env: NodeJS.ProcessEnv
  /** CPUs to keep the process on (`taskset -c` list), when the machine allows pinning. */
  cpus?: string
  /** The node binary to run; this process's own when not given. */
  node?: string
}

const EXIT_WITH_PARENT = new URL('./exit-with-parent.mjs', import.meta.url).href

const live = new Set<ChildProcess>()
const stoppers = new Set<() => Promise<void>>()

// Last resort when the bench exits without stopping them (an uncaught error): no child outlives it.
process.on('exit', () => {
  for (const child of live) child.kill('SIGKILL')
})

/**
 * Runs `node <nodeArgs>` (flags, then the script) with this process's node (or `options.node`) as a process of its own, so it
 * never shares this event loop. It gets an IPC channel (`child.process.send`), and exit-with-parent.mjs
 * preloaded, so that it stops even when the bench itself is killed outright.
 */
export function startNode(name: string, nodeArgs: string[], options: StartOptions): Child {
  const command = [options.node ?? process.execPath, '--import', EXIT_WITH_PARENT, ...nodeArgs]
  const [program, ...args] = options.cpus ? ['taskset', '-c', options.cpus, ...command] : command
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', 'ipc']
  const child = spawn(program as string, args, { cwd: options.cwd, env: options.env, stdio })
  live.add(child)
  let tail = ''
  const collect = (chunk: Buffer) => {
    tail = (tail + chunk.toString()).slice(-OUTPUT_TAIL_CHARS)
  }
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  let ended = false
  // 'close' comes after the output is flushed; a spawn failure emits 'error' instead.
  const exited = once(child, 'close')
    .catch((error: Error) => collect(Buffer.from(`${error.message}\n`)))
    .then(() => {
      ended = true
      live.delete(child)
    })
  return { name, process: child, exited, hasExited: () => ended, output: () => tail }
}

/** SIGTERM, then SIGKILL if the child has not exited within the grace period. */
export async function stopChild(child: Child): Promise<void> {
  if (child.hasExited()) return
  child.process.kill('SIGTERM')
  const timer = delay(STOP_GRACE_MS, 'timeout', { ref: false })
  if ((await Promise.race([child.exited, timer])) === 'timeout') {
    child.process.kill('SIGKILL')
    await child.exited
  }
}

/** Keeps `stop` for `stopEverything` (failure, SIGINT); the returned function stops once and forgets it. */
export function registerStop(stop: () => Promise<void>): () => Promise<void> {
  stoppers.add(stop)
  return async () => {
    if (stoppers.delete(stop)) await stop()
  }
}

export async function stopEverything(): Promise<void> {
  const pending = [...stoppers]
  stoppers.clear()
  await Promise.allSettled(pending.map((stop) => stop()))
}

/** Ctrl-C, or a CI job's timeout: the children must not outlive the bench. */
export function stopOnSignals(): void {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.once(signal, () => {
      console.error(`bench: ${signal}, stopping the servers`)
      void stopEverything().finally(() => process.exit(code))
    })
  }
}

/**
 * A bench command's whole run: its children stopped on a signal and at the end whatever happened; exit 0
 * when `run` says it passed, 1 when it did not or failed (its message printed as `<name> failed: …`).
 */
export async function benchCommand(name: string, run: () => Promise<boolean>): Promise<number> {
  stopOnSignals()
  try {
    return (await run()) ? 0 : 1
  } catch (error) {
    console.error(`${name} failed: ${error instanceof Error ? error.message : String(error)}`)
    return 1
  } finally {
    await stopEverything()
  }
}

/** A port free on 127.0.0.1 at the time of asking. */
export async function freePort(): Promise<number> {
  const server = createServer()
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const { port } = server.address() as { port: number }
  server.close()
  await once(server, 'close')
  return port
}

/** Polls `url` until it answers 2xx; fails early when the child exits, or after `timeoutMs`. */
export async function waitUntilAnswers(child: Child, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.hasExited()) {
      const how = child.process.exitCode ?? child.process.signalCode
      throw new Error(`${child.name} exited (${how}) before answering ${url}:\n${child.output()}`)
    }
    if (await answers(url)) return
    await delay(POLL_INTERVAL_MS)
  }
  throw new Error(`${child.name} did not answer ${url} within ${timeoutMs / 1000} s:\n${child.output()}`)
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) })
    await response.arrayBuffer()
    return response.ok
  } catch {
    return false
  }
}
