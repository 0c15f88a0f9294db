import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'

/**
 * How `npm start` runs the server: node's own flags and the script, as package.json says, with paths
 * absolute so that the server can run from another directory (servers.ts: none with a `.env`).
 */
export interface StartCommand extends NodeScript {
  /** The `scripts.start` text, for the report. */
  text: string
  /** package.json has a `prestart` (npm runs it before `start`). */
  prestart: boolean
}

// Node flags whose value names a module or a file, relative to where npm start runs.
const ESM_FLAGS = new Set(['--import', '--loader', '--experimental-loader'])
const CJS_FLAGS = new Set(['--require', '-r'])
const FILE_FLAGS = new Set(['--env-file'])
// Node flags written with their value as the next word (`--import tsx`), not `--flag=value`.
const FLAGS_WITH_VALUE = new Set([...ESM_FLAGS, ...CJS_FLAGS, ...FILE_FLAGS, '--conditions', '-C', '--title'])

/**
 * A flag's value made absolute: a module or a file, a relative path taken from `repoRoot`, a bare module
 * resolved as the bench resolves it (its node_modules are the repository's).
 */
function absoluteValue(flag: string, value: string, repoRoot: string): string {
  const relative = value.startsWith('.') || value.startsWith('/')
  if (ESM_FLAGS.has(flag)) {
    return relative ? pathToFileURL(resolve(repoRoot, value)).href : import.meta.resolve(value)
  }
  if (CJS_FLAGS.has(flag)) return createRequire(join(repoRoot, 'package.json')).resolve(value)
  if (FILE_FLAGS.has(flag)) return resolve(repoRoot, value)
  return value
}

/** How npm runs one script with node: node's arguments, paths absolute, and whether it runs the sources. */
export interface NodeScript {
  /** node's flags, the script, the script's arguments, every path and module made absolute. */
  nodeArgs: string[]
  /** `tsx <script>`: the sources run as they are, nothing to build. */
  fromSources: boolean
}

/**
 * A package.json script as node arguments: `node [flags] <script> [args]`, or `tsx <script>` (node with
 * `--import tsx`), either after an `exec` (the shell npm runs the script in replaces itself with node, so
 * that npm's signals reach it). Anything else (a shell pipeline, another program) is refused: the bench and
 * the tests run it with this process's own node, so that they run what `npm run` runs.
 */
export function parseNodeScript(text: string, repoRoot: string): NodeScript {
  if (/[|&;<>()$`"'\\]/.test(text)) throw new Error(`script is not a plain command: ${text}`)
  const [program, ...words] = text
    .trim()
    .replace(/^exec\s+/, '')
    .split(/\s+/)
  if (program !== 'node' && program !== 'tsx') throw new Error(`script runs neither node nor tsx: ${text}`)
  const nodeFlags = program === 'tsx' ? ['--import', absoluteValue('--import', 'tsx', repoRoot)] : []
  let i = 0
  for (; i < words.length && words[i]?.startsWith('-'); i++) {
    const word = words[i] as string
    const equals = word.indexOf('=')
    if (equals > 0) {
      const flag = word.slice(0, equals)
      nodeFlags.push(`${flag}=${absoluteValue(flag, word.slice(equals + 1), repoRoot)}`)
    } else if (FLAGS_WITH_VALUE.has(word) && i + 1 < words.length) {
      nodeFlags.push(word, absoluteValue(word, words[++i] as string, repoRoot))
    } else {
      nodeFlags.push(word)
    }
  }
  const script = words[i]
  if (!script) throw new Error(`script names no file to run: ${text}`)
  return {
    nodeArgs: [...nodeFlags, resolve(repoRoot, script), ...words.slice(i + 1)],
    fromSources: program === 'tsx',
  }
}

/** The start command of the package.json in `repoRoot`. */
export async function readStartCommand(repoRoot: string): Promise<StartCommand> {
  const manifest = JSON.parse(await readFile(`${repoRoot}/package.json`, 'utf8')) as {
    scripts?: Record<string, string>
  }
  const start = manifest.scripts?.start
  if (!start) throw new Error('package.json has no scripts.start')
  return { text: start, ...parseNodeScript(start, repoRoot), prestart: Boolean(manifest.scripts?.prestart) }
}

/**
 * What `npm start` does before starting: `npm run prestart` when there is one (the build of `dist/`),
 * else `npm run build` when the server runs from compiled output (a `node` command), so that it runs the
 * code of the working tree. Once per bench run.
 */
export async function prepareStart(repoRoot: string, command: StartCommand): Promise<string | undefined> {
  const script = command.prestart ? 'prestart' : command.fromSources ? undefined : 'build'
  if (!script) return undefined
  const child = spawn('npm', ['run', '--silent', script], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const [code] = (await once(child, 'close')) as [number | null]
  if (code !== 0) throw new Error(`npm run ${script} failed (${code}):\n${output.slice(-4_000)}`)
  return `npm run ${script}`
}
