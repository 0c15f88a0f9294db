import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

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
  const [program, ...args] = scripts[name]?.split(' ') ?? []
  if (program !== 'node') throw new Error(`npm script ${name} does not start node: ${scripts[name]}`)
  return {
    command: process.execPath,
    args: args.map((arg) => (arg.startsWith('-') ? arg : `${PROJECT_ROOT}/${arg}`)),
  }
}
