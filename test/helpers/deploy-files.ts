import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parse } from 'yaml'
import { PROJECT_ROOT } from './npm-scripts.js'

/** One instruction of a Dockerfile: its keyword (upper case) and the rest of its line(s), continuations joined. */
export interface DockerInstruction {
  keyword: string
  args: string
}

/** A stage: `FROM <image> AS <name>` and its instructions. */
export interface DockerStage {
  name: string
  instructions: DockerInstruction[]
}

/** The Dockerfile's stages, in order; the parser directive and comments left out. */
export function dockerfileStages(): DockerStage[] {
  const text = readFileSync(join(PROJECT_ROOT, 'Dockerfile'), 'utf8')
  const lines = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
  const stages: DockerStage[] = []
  for (const line of lines) {
    const [keyword = '', args = ''] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]
    if (keyword.toUpperCase() === 'FROM') {
      const name = /\bAS\s+(\S+)$/i.exec(args)?.[1]
      if (!name) throw new Error(`Dockerfile: a stage without a name: ${line}`)
      stages.push({ name, instructions: [] })
    } else if (keyword.toUpperCase() !== 'ARG' || stages.length > 0) {
      const stage = stages.at(-1)
      if (!stage) throw new Error(`Dockerfile: ${keyword} before the first FROM`)
      stage.instructions.push({ keyword: keyword.toUpperCase(), args: args.trim() })
    }
  }
  return stages
}

/** The instructions of stage `name` with keyword `keyword`. */
export function instructionsOf(stage: DockerStage, keyword: string): string[] {
  return stage.instructions.filter((instruction) => instruction.keyword === keyword).map((i) => i.args)
}

/** An exec-form (JSON array) CMD or HEALTHCHECK CMD as its argv; a shell form is refused. */
export function execForm(args: string): string[] {
  const argv = JSON.parse(args.replace(/^CMD\s+/, '')) as unknown
  if (!Array.isArray(argv) || !argv.every((word) => typeof word === 'string'))
    throw new Error(`not an exec-form command: ${args}`)
  return argv
}

/** `ENV a=1 b=2` (several instructions together) as a record. */
export function envOf(stage: DockerStage): Record<string, string> {
  return Object.fromEntries(
    instructionsOf(stage, 'ENV').flatMap((args) =>
      args.split(/\s+/).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]),
    ),
  )
}

/** A package.json script that runs node (`exec node <flags> <file>`) as the argv a container runs. */
export function packageScriptArgv(name: string): string[] {
  const scripts = JSON.parse(readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8')).scripts as Record<
    string,
    string
  >
  const script = scripts[name]
  if (!script) throw new Error(`package.json has no script ${name}`)
  return script.replace(/^exec\s+/, '').split(/\s+/)
}

/** A service of compose.yaml as far as the tests read it (YAML merge keys applied). */
export interface ComposeService {
  image?: string
  build?: unknown
  command?: string[]
  environment?: Record<string, string>
  depends_on?: Record<string, { condition: string }>
  healthcheck?: { disable?: boolean; test?: string[] }
  ports?: string[]
  stop_grace_period?: string
  volumes?: string[]
}

export function composeServices(): Record<string, ComposeService> {
  const text = readFileSync(join(PROJECT_ROOT, 'compose.yaml'), 'utf8')
  return (parse(text, { merge: true }) as { services: Record<string, ComposeService> }).services
}

/**
 * A value as compose interpolates it for an operator who set exactly `values`: `${NAME:?message}` is the
 * operator's value (compose refuses to start without one), `${NAME:-default}` the default. Other forms are
 * refused, so that what the tests start is what compose would.
 */
export function interpolate(value: string, values: Record<string, string>): string {
  const result = value.replace(/\$\{(\w+):([?-])([^}]*)\}/g, (_match, name: string, kind: string, rest) => {
    if (kind === '-') return rest
    const given = values[name]
    if (!given) throw new Error(`no test value for compose.yaml's required ${name}`)
    return given
  })
  if (result.includes('$'))
    throw new Error(`compose.yaml: a variable in another form than \${NAME:?} or \${NAME:-}: ${value}`)
  return result
}

/** The names of the environment variables src/config.ts reads (`env.NAME`, or `'NAME'` given to a reader). */
export function variablesConfigReads(): Set<string> {
  const source = readFileSync(join(PROJECT_ROOT, 'src/config.ts'), 'utf8')
  const names = [...source.matchAll(/\benv\.([A-Z][A-Z0-9_]+)|'([A-Z][A-Z0-9_]+)'/g)].map(
    (match) => (match[1] ?? match[2]) as string,
  )
  return new Set(names)
}

/** Where the deploying docs live: README's Deploying section, or the page it moved to. */
const DEPLOYING_DOCS = ['README.md', 'docs/deploying.md']

/**
 * The names set by the docs' `sh` block that follows `lead` (e.g. "The smallest production environment that
 * starts"), in whichever of the deploying docs holds it.
 */
export function deployingBlockVariables(lead: string): string[] {
  const text = DEPLOYING_DOCS.map((file) => join(PROJECT_ROOT, file))
    .filter((path) => existsSync(path))
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n')
  const block = text
    .split(lead)[1]
    ?.split(/```sh[^\n]*\n/)[1]
    ?.split('```')[0]
  if (!block) throw new Error(`the deploying docs lost their block "${lead}"`)
  return block
    .trim()
    .split('\n')
    .map((line) => line.slice(0, line.indexOf('=')))
}
