import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { parseNodeScript } from '../../bench/start-command.js'

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
