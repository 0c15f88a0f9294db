import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseNodeScript } from '../../bench/start-command.js'
import { type WatchedProcess, watchProcess } from './processes.js'

/** The project's root: where package.json, dist/ and drizzle/ are. */
export const PROJECT_ROOT = fileURLToPath(new URL('../..', import.meta.url))

const scripts: Record<string, string> = JSON.parse(
  readFileSync(`${PROJECT_ROOT}/package.json`, 'utf8'),
).scripts

/**
 * How `npm run <name>` starts its process, minus npm: this Node with the script's own flags and file
 * (absolute), so tests run exactly what a user starts. The build (its `pre` script) ran in globalSetup.
 */
export function npmScriptCommand(name: string): { command: string; args: string[] } {
  const { nodeArgs, fromSources } = parseNodeScript(scripts[name] ?? '', PROJECT_ROOT)
  if (fromSources) throw new Error(`npm script ${name} runs the sources, not the build: ${scripts[name]}`)
  return { command: process.execPath, args: nodeArgs }
}

/**
 * `npm run <name>` itself, as a supervisor starts it: npm's process is the child, in a process group of its
 * own, so that a test can signal npm alone and then see whether anything it started is left.
 */
export function spawnNpmScript(name: string, env: NodeJS.ProcessEnv): WatchedProcess {
  const child = spawn('npm', ['run', '--silent', name], {
    cwd: PROJECT_ROOT,
    env,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  return watchProcess(child)
}

/** Whether any process is left in the process group `pgid` (one spawned with `detached`, by its pid). */
export function processGroupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}
