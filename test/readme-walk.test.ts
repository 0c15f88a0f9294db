import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type FakeGraphApi, startFakeGraphApi } from './fakes/graph-api.js'
import { type FakeListingsApi, startFakeListingsApi } from './fakes/listings-api.js'
import { freePort } from './helpers/app.js'
import { LEADS_APP, leadsEnv } from './helpers/leads.js'
import { PROJECT_ROOT } from './helpers/npm-scripts.js'
import { watchProcess } from './helpers/processes.js'
import { matchesExpectation, runWalk, walkPages, walkSteps } from './helpers/readme-walk.js'

/**
 * The walk's pages in the order a reader follows them from README: one shell throughout, so the docs pages'
 * examples use the token and the ids README's first steps set.
 */
const WALK_PAGES = ['README.md', 'docs/api.md']

/** README and every Markdown page under docs/, as paths from the project's root. */
const allPages = () => [
  'README.md',
  ...readdirSync(join(PROJECT_ROOT, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((path) => path.endsWith('.md'))
    .map((path) => join('docs', path)),
]

/** A page's text outside fenced blocks and code spans: what Markdown reads as prose, links and headings. */
const prose = (page: string) =>
  page.replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '').replace(/``[^`]*``|`[^`\n]*`/g, '')

/** A heading's link target, as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
const anchorOf = (heading: string) =>
  heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-')

/** The link targets of headings in a page (code spans in a heading keep their text). */
const anchorsOf = (page: string) =>
  new Set(
    page
      .replace(/^```[^\n]*\n[\s\S]*?^```$/gm, '')
      .split('\n')
      .flatMap((line) => /^#+ (.*)$/.exec(line)?.[1] ?? [])
      .map(anchorOf),
  )

/** The links of `page` (a path from the project's root) to another file of the repository that is not there, or to a heading that is not. */
function brokenLinks(page: string): string[] {
  const text = readFileSync(join(PROJECT_ROOT, page), 'utf8')
  const targets = [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] as string)
  return targets.filter((target) => {
    if (/^[a-z]+:/.test(target)) return false
    const [path = '', anchor] = target.split('#')
    const file = path === '' ? join(PROJECT_ROOT, page) : join(PROJECT_ROOT, dirname(page), path)
    if (!existsSync(file)) return true
    return anchor !== undefined && file.endsWith('.md') && !anchorsOf(readFileSync(file, 'utf8')).has(anchor)
  })
}

/** Only what a newcomer's shell has: no configuration of the service, no database or Redis of the suite. */
const newcomerEnv = (settings: Record<string, string>): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  LANG: 'C.UTF-8',
  ...settings,
})

describe("README's walk", () => {
  const workDir = mkdtempSync(join(tmpdir(), 'readme-walk-'))
  const dataDir = join(workDir, 'data')
  let server: ChildProcess | undefined
  let listingsApi: FakeListingsApi | undefined
  let graphApi: FakeGraphApi | undefined
  let platformUrl = ''

  beforeAll(async () => {
    // The providers of README's `needs-provider` blocks.
    listingsApi = await startFakeListingsApi({ apiKey: 'walk-listings-key' })
    graphApi = await startFakeGraphApi({ appId: LEADS_APP.appId, appSecret: LEADS_APP.appSecret })
    graphApi.addUser('EAAB-walk-user-token', { '101234567890': 'EAAG-walk-page-token' })
    graphApi.addForm('101234567890', { id: '998877665544', name: 'Spring offer' })
    graphApi.addLead('998877665544', {
      id: '1122334455',
      created_time: new Date(),
      field_data: [{ name: 'email', values: ['grace@example.com'] }],
    })
    const providers = {
      LISTINGS_API_URL: listingsApi.url,
      LISTINGS_API_KEY: 'walk-listings-key',
      ...leadsEnv(graphApi.url),
    }
    const port = await freePort()
    platformUrl = `http://127.0.0.1:${port}`
    // `npm start` minus its build (dist/ is built once for the suite), in a directory of its own: no `.env`.
    server = spawn(process.execPath, ['--enable-source-maps', join(PROJECT_ROOT, 'dist/main.js')], {
      cwd: workDir,
      env: newcomerEnv({
        DATA_DIR: dataDir,
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'warn',
        ...providers,
      }),
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    await watchProcess(server).printed('listening on')
  })

  afterAll(async () => {
    if (server && server.exitCode === null) {
      await new Promise((resolve) => {
        server?.once('exit', resolve)
        server?.kill('SIGTERM')
      })
    }
    await Promise.all([listingsApi?.close(), graphApi?.close()])
    rmSync(workDir, { recursive: true, force: true })
  })

  it('runs block after block in one shell, each printing what the page shows', async () => {
    const steps = walkPages(PROJECT_ROOT, WALK_PAGES)
    expect(steps.length).toBeGreaterThan(50)
    // curl's progress meter would fill the failure message.
    writeFileSync(join(workDir, '.curlrc'), 'silent\nshow-error\n')
    const result = await runWalk(steps, {
      cwd: PROJECT_ROOT,
      env: newcomerEnv({
        PLATFORM_URL: platformUrl,
        DATA_DIR: dataDir,
        CURL_HOME: workDir,
        // `npm run cli` without its prebuild: dist/ is built, and rebuilding it would race the other files.
        npm_config_ignore_scripts: 'true',
      }),
      timeoutMs: 90_000,
    })
    if (result.failure) {
      throw new Error(`${result.failure.step.where}: the step ${result.failure.reason}`)
    }
    expect(result.stepsRun).toBe(steps.length)
  }, 120_000)
})

describe("the walk's pages", () => {
  it('are every page that has blocks to run', () => {
    const withSteps = allPages().filter((page) => walkPages(PROJECT_ROOT, [page]).length > 0)
    expect(withSteps.sort()).toEqual([...WALK_PAGES].sort())
  })
})

describe('the docs', () => {
  it('link to files and headings that exist', () => {
    const broken = Object.fromEntries(allPages().map((page) => [page, brokenLinks(page)]))
    expect(broken).toEqual(Object.fromEntries(allPages().map((page) => [page, []])))
  })

  it('cite no document outside the repository', () => {
    const outside = /\b[Tt]he spec\b|\bspec's\b|ARCHITECTURE\.md|architecture notes|\b[Ii]ssue \d+/g
    const cited = allPages().flatMap((page) =>
      [...readFileSync(join(PROJECT_ROOT, page), 'utf8').matchAll(outside)].map(
        (match) => `${page}: ${match[0]}`,
      ),
    )
    expect(cited).toEqual([])
  })
})

describe('the walk runner', () => {
  const readme = (block: string, info = 'sh') => `# Title\n\n## Section\n\n\`\`\`${info}\n${block}\n\`\`\`\n`
  const run = (text: string) =>
    runWalk(walkSteps(text, 'README.md'), { cwd: tmpdir(), env: newcomerEnv({}), timeoutMs: 10_000 })

  it('cuts sh blocks at their `# =>` lines, joins continued ones, and skips no-run and other blocks', () => {
    const text = `${readme('A=1\necho $A\n# => 1\necho "{\\"b\\":2}"\n# => {"b":\n#      2}\necho tail')}${readme(
      'npm start',
      'sh no-run',
    )}${readme('console.log(1)', 'js')}`
    expect(walkSteps(text, 'README.md')).toEqual([
      { where: 'README.md, "Section", line 8', script: 'A=1\necho $A', expected: '1' },
      { where: 'README.md, "Section", line 10', script: 'echo "{\\"b\\":2}"', expected: '{"b":2}' },
      { where: 'README.md, "Section", block at line 5', script: 'echo tail' },
    ])
  })

  it('takes … for any text, and compares the rest exactly', () => {
    expect(matchesExpectation('{"_id":"6b07","name":"Ada","x":1}\n', '{"_id":"…","name":"Ada",…}')).toBe(true)
    expect(matchesExpectation('{"_id":"6b07","name":"Bob"}', '{"_id":"…","name":"Ada"…}')).toBe(false)
    expect(matchesExpectation('{"total":12}', '{"total":1}')).toBe(false)
  })

  it('carries variables from block to block, and passes when every step prints what it shows', async () => {
    const result = await run(`${readme('A=1')}${readme('echo $A\n# => 1')}`)
    expect(result).toEqual({ stepsRun: 2 })
  })

  it('fails on a step that prints something else, naming its line', async () => {
    const result = await run(readme('echo 1\n# => 1\necho 2\n# => 3\necho 4\n# => 4'))
    expect(result.failure?.step.where).toBe('README.md, "Section", line 9')
    expect(result.failure?.reason).toBe('printed\n  2\ninstead of\n  3')
  })

  it('walks pages in the order given, in one shell: a page uses what an earlier one set', async () => {
    const root = mkdtempSync(join(tmpdir(), 'walk-pages-'))
    mkdirSync(join(root, 'docs'))
    writeFileSync(join(root, 'README.md'), readme('A=1'))
    writeFileSync(join(root, 'docs/api.md'), readme('echo $A\n# => 2'))
    const steps = walkPages(root, ['README.md', 'docs/api.md'])
    expect(steps.map((step) => step.where)).toEqual([
      'README.md, "Section", block at line 5',
      'docs/api.md, "Section", line 7',
    ])
    const result = await runWalk(steps, { cwd: root, env: newcomerEnv({}), timeoutMs: 10_000 })
    expect(result.failure?.reason).toBe('printed\n  1\ninstead of\n  2')
    rmSync(root, { recursive: true, force: true })
  })

  it('fails on a step that exits non-zero, or uses a variable nothing set, naming it', async () => {
    const failing = await run(`${readme('echo 1\n# => 1')}${readme('false\necho never')}`)
    expect(failing.failure?.step.where).toBe('README.md, "Section", block at line 13')
    expect(failing.failure?.reason).toMatch(/^exited 1/)
    const unset = await run(readme('echo $NOTHING_SET\n# => '))
    expect(unset.failure?.reason).toMatch(/NOTHING_SET: unbound variable/)
  })
})
