import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import SwaggerParser from '@apidevtools/swagger-parser'
import openapiTS, { astToString } from 'openapi-typescript'
import ts from 'typescript'
import { describe, expect } from 'vitest'
import { test } from './helpers/tenant-test.js'

/**
 * The OpenAPI document at `/docs/json` as client generators take it: swagger-parser validates it, Redocly's
 * recommended rules (redocly.yaml) find no error in it, and openapi-typescript turns it into types that a
 * typed call per area compiles against under `--strict`. Every route is in the document these read, so a
 * route added later cannot break a client unnoticed.
 */

/** Warnings docs/decisions.md explains (Redocly's recommended rules, as redocly.yaml sets them). */
const EXPLAINED_WARNINGS = [
  'info-license',
  'no-ambiguous-paths',
  'no-path-trailing-slash',
  'operation-2xx-response',
]

/**
 * One call per area through the generated `paths`, each reading a field of its answer, and calls that must
 * not compile: types collapsed to `any` would pass the first but not the second. Only the types are
 * checked (the document's answers are checked by each module's tests), so `call` is declared, not built.
 */
const CALLS = `import type { paths } from './api'

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete'
type Json<T> = T extends { content: { 'application/json': infer Body } } ? Body : never
type Answer<Op> = Op extends { responses: infer Answers } ? Json<Answers[Extract<keyof Answers, 200 | 201>]> : never
type Input<Op> = (Op extends { parameters: infer Parameters } ? Parameters : never) &
  ([Json<Op extends { requestBody?: infer Body } ? Body : never>] extends [never]
    ? unknown
    : { body: Json<Op extends { requestBody?: infer Body } ? Body : never> })

declare function call<Path extends keyof paths, M extends Method & keyof paths[Path]>(
  method: M,
  path: Path,
  input: Input<paths[Path][M]>,
): Promise<Answer<paths[Path][M]>>

export async function everyArea(id: string): Promise<unknown[]> {
  const dnd = await call('post', '/v1/e/mailprovider/dnd', { body: { value: 'ada@example.com' } })
  const dndType: 'permanent' | 'temporary' = dnd.data.type
  const grants = await call('get', '/v1/auth/oauth/grants', {})
  const scopes: string[][] = grants.data.map((grant) => grant.scopes)
  const stats = await call('get', '/v1/reviews/stats', { query: { from: '2024-01-01T00:00:00.000Z' } })
  const requested: number = stats.data.totals.requested
  const rooms = await call('get', '/api/conversation-v2/room/', { query: { status: 'unread' } })
  const roomNames: (string | null)[] = rooms.rooms.map((room) => room.name)
  const funnel = await call('get', '/v1/funnels/{id}', { path: { id } })
  const funnelName: string = funnel.data.name
  const listings = await call('get', '/v1/e/listings/accounts', { query: { limit: 10 } })
  const listed: number = listings.response.count
  const campaigns = await call('get', '/v1/e/socialnet/campaigns', {})
  const pages: string[] = campaigns.data.map((campaign) => campaign.page_id)
  const posts = await call('get', '/v1/integrations/changelog/posts', { query: { page: 1 } })
  const perPage: number = posts.pagination.per_page
  const account = await call('post', '/v1/admin/accounts', { body: { name: 'Acme', tier: 'pro' } })
  const tier: 'basic' | 'pro' | 'enterprise' = account.data.tier
  const status = await call('get', '/status', {})
  const up: 'ok' = status.status

  // @ts-expect-error a field the answer does not have
  const missing: string = status.uptime
  // @ts-expect-error a body the operation does not take
  await call('get', '/status', { body: {} })
  // @ts-expect-error a path parameter left out
  await call('get', '/v1/funnels/{id}', {})
  return [dndType, scopes, requested, roomNames, funnelName, listed, pages, perPage, tier, up, missing]
}
`

const execFileAsync = promisify(execFile)

interface LintProblem {
  ruleId: string
  severity: 'error' | 'warn'
  message: string
  location: { pointer: string }[]
}

/** Redocly's CLI on the document written to `file`, with the repository's redocly.yaml. */
async function redoclyLint(file: string): Promise<LintProblem[]> {
  const args = ['lint', file, '--config', 'redocly.yaml', '--format=json', '--max-problems=10000']
  // It exits non-zero when it finds errors; its report is on stdout either way.
  const { stdout } = await execFileAsync(join('node_modules', '.bin', 'redocly'), args, {
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' },
    maxBuffer: 64 * 1024 * 1024,
  }).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
  return (JSON.parse(stdout) as { problems: LintProblem[] }).problems
}

/** The compiler's diagnostics of `files` under `--strict`, as tsc prints them. */
function strictDiagnostics(files: string[]): string {
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    noUncheckedIndexedAccess: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    lib: ['lib.es2023.d.ts'],
    types: [],
  }
  const program = ts.createProgram(files, options)
  return ts.formatDiagnostics(ts.getPreEmitDiagnostics(program), {
    getCanonicalFileName: (name) => name,
    getCurrentDirectory: () => process.cwd(),
    getNewLine: () => '\n',
  })
}

describe('the OpenAPI document, for client generators', () => {
  let document: Record<string, unknown>
  let dir: string

  test.beforeAll(async ({ t }) => {
    document = (await t.app.inject({ url: '/docs/json' })).json()
    dir = await mkdtemp(join(tmpdir(), 'openapi-client-'))
  })
  test.afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  test('is valid OpenAPI for swagger-parser', async () => {
    // It dereferences what it validates: a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy()
  })

  test("has no error under Redocly's recommended rules, and only the warnings docs/decisions.md explains", async () => {
    const file = join(dir, 'openapi.json')
    await writeFile(file, JSON.stringify(document))
    const problems = await redoclyLint(file)
    const errors = problems
      .filter((problem) => problem.severity === 'error')
      .map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`)
    expect(errors).toEqual([])
    const warned = [...new Set(problems.map((problem) => problem.ruleId))]
    expect(warned.filter((rule) => !EXPLAINED_WARNINGS.includes(rule))).toEqual([])
  })

  test('gives openapi-typescript types that a typed call per area compiles against under --strict', async () => {
    const types = astToString(await openapiTS(structuredClone(document) as never))
    await writeFile(join(dir, 'api.d.ts'), types)
    const calls = join(dir, 'calls.ts')
    await writeFile(calls, CALLS)
    expect(strictDiagnostics([calls])).toBe('')
  })
})
