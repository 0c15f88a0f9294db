import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { chownSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { freePort } from './app.js'

/**
 * A PostgreSQL cluster and a Redis server of the test's own, started from the machine's binaries, that a
 * test may stop, kill and start again without disturbing anything else (the machine's shared PostgreSQL and
 * Redis are never touched). PostgreSQL refuses to run as root: as root, its commands run as `postgres`.
 */

const asRoot = process.getuid?.() === 0

/** Runs a PostgreSQL binary (as `postgres` when the test runs as root) and returns what it printed. */
function runPostgresTool(tool: string, args: string[]): string {
  const bin = join(execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim(), tool)
  const [command, commandArgs] = asRoot ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args]
  return execFileSync(command, commandArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })
}

export interface PrivatePostgres {
  /** The URL of its `postgres` database (trust authentication, user postgres). */
  url: string
  port: number
  /** Its server log (with `log_statement=all`, every statement it ran). */
  logFile: string
  /** `pg_ctl stop -m fast` (a clean stop, as a restart for a minor version) or `immediate` (killed hard). */
  stop(mode: 'fast' | 'immediate'): void
  start(): void
  /** Stops it and removes its files. */
  destroy(): void
}

/** A private cluster's folder, owned by `postgres` when the test runs as root. */
function clusterFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'private-postgres-'))
  if (asRoot) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })), 0)
  return dir
}

/** Starts the cluster in `dir`/data on `port` with `settings` (`name=value`), and how to stop and remove it. */
function runCluster(dir: string, port: number, settings: string[]): PrivatePostgres {
  const data = join(dir, 'data')
  const logFile = join(dir, 'log')
  // Nothing here outlives the test: fsync off spares the disk; the socket stays in the cluster's folder.
  const options = [
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`,
    ...settings.map((setting) => `-c ${setting}`),
  ].join(' ')
  const pgCtl = (...args: string[]) => runPostgresTool('pg_ctl', ['-D', data, ...args])
  const start = () => void pgCtl('-o', options, '-l', logFile, '-w', 'start')
  start()
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    logFile,
    stop: (mode) => void pgCtl('-m', mode, '-w', 'stop'),
    start,
    destroy: () => {
      try {
        pgCtl('-m', 'immediate', '-w', 'stop')
      } catch {
        // Already stopped.
      }
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

export async function startPrivatePostgres(settings: string[] = []): Promise<PrivatePostgres> {
  const dir = clusterFolder()
  runPostgresTool('initdb', [
    '-D',
    join(dir, 'data'),
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '-E',
    'UTF8',
  ])
  return runCluster(dir, await freePort(), settings)
}

/**
 * A streaming replica of `primary`: its copy taken with `pg_basebackup -R` (which writes the settings that
 * make it a standby following the primary), started on a port of its own; hot standby, so it serves reads.
 * Its slot stays on the primary, which keeps WAL for it while it is stopped: destroy the primary with it.
 * `settings` such as `recovery_min_apply_delay=400ms` or `log_statement=all`.
 */
export async function startPrivateStandby(
  primary: PrivatePostgres,
  settings: string[] = [],
): Promise<PrivatePostgres> {
  const dir = clusterFolder()
  const port = await freePort()
  // A replication slot of its own (-C -S), which -R names in its settings: the primary keeps every WAL segment
  // the standby has yet to receive, where otherwise the next checkpoint (another copy's) may remove it first.
  runPostgresTool('pg_basebackup', [
    ...['-D', join(dir, 'data'), '-R', '-X', 'stream', '--no-sync', '-C', '-S', `standby_${port}`],
    ...['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres'],
  ])
  return runCluster(dir, port, settings)
}

export interface PrivateRedis {
  url: string
  /** Ends the server (SIGTERM, as a restart does), and resolves once it has exited. */
  stop(): Promise<void>
  /** Starts it again on the same port, and resolves once it answers. */
  start(): Promise<void>
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  let server: ChildProcess | undefined
  const start = async () => {
    const started = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    server = started
    for (let tries = 0; tries < 100; tries++) {
      try {
        execFileSync('redis-cli', ['-p', String(port), 'ping'], { stdio: 'ignore' })
        return
      } catch {
        if (started.exitCode !== null) throw new Error(`redis-server on ${port} exited`)
        await sleep(50)
      }
    }
    throw new Error(`redis-server on ${port} did not answer`)
  }
  const stop = async () => {
    const running = server
    server = undefined
    if (!running || running.exitCode !== null) return
    await new Promise((resolve) => {
      running.once('exit', resolve)
      running.kill('SIGTERM')
    })
  }
  await start()
  return { url: `redis://127.0.0.1:${port}`, stop, start }
}
