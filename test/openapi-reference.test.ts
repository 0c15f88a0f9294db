import { Ajv } from 'ajv'
import formats from 'ajv-formats'
import type { FastifyInstance } from 'fastify'
import { describe, expect } from 'vitest'
import { test } from './helpers/tenant-test.js'

/**
 * The API reference teaches: every operation says what it does, every shape that recurs is a
 * named component (generated clients get named types), every route lists its error answers in their
 * envelope, each area shows an example of its main operations, and each security scheme says how to obtain
 * its token. Each check lists everything still lacking, so that one run names all of it.
 */

interface Schema {
  $ref?: string
  type?: string
  properties?: Record<string, Schema>
  [keyword: string]: unknown
}
interface Media {
  schema?: Schema
  example?: unknown
}
interface Operation {
  summary?: string
  description?: string
  tags?: string[]
  requestBody?: { $ref?: string; content?: Record<string, Media> }
  responses?: Record<string, { description?: string; content?: Record<string, Media> }>
}
interface Document {
  info: { description?: string }
  paths: Record<string, Record<string, Operation>>
  components: {
    schemas: Record<string, Schema>
    requestBodies?: Record<string, { content?: Record<string, Media> }>
    securitySchemes: Record<string, { description?: string }>
  }
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch']
const COMPONENTS = '#/components/schemas/'

async function documentOf(app: FastifyInstance) {
  const document: Document = (await app.inject({ url: '/docs/json' })).json()
  const operations = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.includes(method))
      .map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
  )
  return { document, operations }
}

/** Every media type of an operation: its body's (named or not) and its answers', by where they are. */
function mediaOf(
  document: Document,
  operation: Operation,
): { where: string; status?: string; media: Media }[] {
  const ref = operation.requestBody?.$ref?.replace('#/components/requestBodies/', '')
  const body = ref ? document.components.requestBodies?.[ref] : operation.requestBody
  return [
    ...Object.values(body?.content ?? {}).map((media) => ({ where: 'body', media })),
    ...Object.entries(operation.responses ?? {}).flatMap(([status, answer]) =>
      Object.values(answer.content ?? {}).map((media) => ({ where: status, status, media })),
    ),
  ]
}

/** Each object schema with properties found under `schema` (not inside `example`s: those are data). */
function* objectsIn(schema: unknown): Generator<Schema> {
  if (Array.isArray(schema)) {
    for (const item of schema) yield* objectsIn(item)
    return
  }
  if (typeof schema !== 'object' || schema === null) return
  const value = schema as Schema
  if (value.type === 'object' && value.properties && Object.keys(value.properties).length > 0) yield value
  for (const [key, item] of Object.entries(value)) {
    if (key === 'example' || key === 'examples' || key === 'default' || key === 'enum') continue
    if (key === 'properties') for (const property of Object.values(item as object)) yield* objectsIn(property)
    else yield* objectsIn(item)
  }
}

/**
 * A schema of the document as JSON Schema, for Ajv: 3.0's boolean `exclusiveMinimum`/`exclusiveMaximum` as a
 * bound, and `nullable` as a choice of null or the rest (a named schema's nullable use is `allOf` its $ref).
 */
function asJsonSchema<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(asJsonSchema) as T
  if (typeof schema !== 'object' || schema === null) return schema
  const copy: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(schema)) {
    copy[key] = key === 'example' || key === 'enum' || key === 'default' ? value : asJsonSchema(value)
  }
  for (const [exclusive, inclusive] of [
    ['exclusiveMinimum', 'minimum'],
    ['exclusiveMaximum', 'maximum'],
  ] as const) {
    if (copy[exclusive] !== true) continue
    copy[exclusive] = copy[inclusive]
    delete copy[inclusive]
  }
  if (copy.nullable !== true) return copy as T
  const { nullable: _, ...rest } = copy
  return { anyOf: [{ type: 'null' }, rest] } as T
}

describe('the API reference', () => {
  test('describes every operation: a summary and a description', async ({ t }) => {
    const { operations } = await documentOf(t.app)
    expect(operations.length).toBeGreaterThan(200)
    const undescribed = operations
      .filter(({ operation }) => !operation.summary?.trim() || !operation.description?.trim())
      .map(({ route }) => route)
    expect(undescribed).toEqual([])
  })

  test('names every object schema that recurs as a component', async ({ t }) => {
    const { document, operations } = await documentOf(t.app)
    const seen = new Map<string, string[]>()
    const note = (schema: unknown, where: string) => {
      for (const object of objectsIn(schema)) {
        const key = JSON.stringify(object)
        seen.set(key, [...(seen.get(key) ?? []), where])
      }
    }
    for (const { route, operation } of operations) {
      // A named request body is noted once, with the components, below.
      const own = operation.requestBody?.$ref ? { ...operation, requestBody: undefined } : operation
      for (const { where, media } of mediaOf(document, own)) note(media.schema, `${route} ${where}`)
    }
    const bodies = Object.entries(document.components.requestBodies ?? {}).flatMap(([name, body]) =>
      // One media type: a body taken as a form and as JSON has one schema.
      Object.values(body.content ?? {})
        .slice(0, 1)
        .flatMap((media) => (media.schema ? [[name, media.schema] as const] : [])),
    )
    for (const [name, schema] of [...Object.entries(document.components.schemas), ...bodies]) {
      // A component's own object is its name; what it holds inline is what may recur.
      for (const [property, value] of Object.entries(schema.properties ?? {})) {
        note(value, `${name}.${property}`)
      }
      for (const key of ['items', 'allOf', 'anyOf', 'oneOf', 'additionalProperties']) {
        note(schema[key], `${name}.${key}`)
      }
    }
    // An object found inside a repeated one is counted there too: report the outermost only.
    const repeated = [...seen].filter(([, places]) => places.length > 1)
    const outermost = repeated.filter(
      ([key]) => !repeated.some(([other]) => other !== key && other.includes(key)),
    )
    const described = outermost.map(([key, places]) => ({
      properties: Object.keys(JSON.parse(key).properties).join(', '),
      times: places.length,
      at: places.slice(0, 3),
    }))
    expect(described).toEqual([])
    // The shared ones, at least, are named.
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['ErrorEnvelope', 'StatusErrorEnvelope', 'Pagination', 'CursorPagination']),
    )
  })

  test("lists each route's error answers in a named envelope, and describes every answer", async ({ t }) => {
    const { operations } = await documentOf(t.app)
    const withoutErrors: string[] = []
    const anonymousErrors: string[] = []
    const undescribed: string[] = []
    for (const { route, operation } of operations) {
      const answers = Object.entries(operation.responses ?? {})
      const errors = answers.filter(([status]) => Number(status) >= 400)
      if (errors.length === 0) withoutErrors.push(route)
      for (const [status, answer] of errors) {
        for (const media of Object.values(answer.content ?? {})) {
          // A JSON body must be a named envelope; a page or a plain text answer has none.
          const object = media.schema?.type === 'object' || media.schema?.properties
          if (object && !media.schema?.$ref) anonymousErrors.push(`${route} ${status}`)
        }
      }
      for (const [status, answer] of answers) {
        if (!answer.description || answer.description === 'Default Response')
          undescribed.push(`${route} ${status}`)
      }
    }
    expect({ withoutErrors, anonymousErrors, undescribed }).toEqual({
      withoutErrors: [],
      anonymousErrors: [],
      undescribed: [],
    })
  })

  test("shows an example of each area's main operations, each true to its schema", async ({ t }) => {
    const { document, operations } = await documentOf(t.app)
    const ajv = new Ajv({ strict: false, allErrors: true })
    // A CommonJS module: its default export is under `default` to TypeScript's NodeNext.
    formats.default(ajv)
    for (const [name, schema] of Object.entries(document.components.schemas)) {
      ajv.addSchema(asJsonSchema(schema), `${COMPONENTS}${name}`)
    }
    const untrue: string[] = []
    const exemplified = new Set<string>()
    for (const { route, operation } of operations) {
      for (const { where, status, media } of mediaOf(document, operation)) {
        if (media.example === undefined || !media.schema) continue
        if (status?.startsWith('2')) for (const tag of operation.tags ?? []) exemplified.add(tag)
        const validate = ajv.compile(asJsonSchema(media.schema))
        if (!validate(media.example)) untrue.push(`${route} ${where}: ${ajv.errorsText(validate.errors)}`)
      }
    }
    const areas = new Set(operations.flatMap(({ operation }) => operation.tags ?? []))
    const withoutExample = [...areas].filter((area) => !exemplified.has(area))
    expect({ untrue, withoutExample }).toEqual({ untrue: [], withoutExample: [] })
  })

  test('says how to obtain the token of each security scheme, and teaches in its introduction', async ({
    t,
  }) => {
    const { document } = await documentOf(t.app)
    const schemes = Object.entries(document.components.securitySchemes)
    expect(schemes.map(([name]) => name).sort()).toEqual(['admin', 'bearer', 'edgeSignature', 'oauth2'])
    const withoutHowTo = schemes
      .filter(([, scheme]) => !/Obtain: .{40,}/.test(scheme.description ?? ''))
      .map(([name]) => name)
    expect(withoutHowTo).toEqual([])
    // Each names where its token comes from.
    expect(document.components.securitySchemes.bearer?.description).toContain('POST /v1/admin/tokens')
    expect(document.components.securitySchemes.admin?.description).toContain('ADMIN_TOKEN')
    expect(document.components.securitySchemes.oauth2?.description).toContain('/v1/auth/oauth/token')
    expect(document.components.securitySchemes.edgeSignature?.description).toContain('EDGE_SIGNING_SECRET')
    const headings = document.info.description?.match(/^## .+$/gm)
    expect(headings).toEqual(['## Authentication', '## Envelopes', '## Pagination', '## Rate limits'])
  })

  test('GET / points to the reference: a browser to the page, a program to the links', async ({ t }) => {
    const browser = await t.app.inject({ url: '/', headers: { accept: 'text/html,application/xhtml+xml' } })
    expect(browser.statusCode).toBe(302)
    expect(browser.headers.location).toBe('/docs')
    const program = await t.app.inject({ url: '/', headers: { accept: 'application/json' } })
    expect(program.statusCode).toBe(200)
    const links = program.json()
    expect(links).toEqual({
      name: 'Platform backend',
      reference: '/docs',
      openapi: '/docs/json',
      status: '/status',
    })
    const reached = await Promise.all(
      [links.reference, links.openapi, links.status].map(async (url) => {
        return `${url} ${(await t.app.inject({ url })).statusCode}`
      }),
    )
    expect(reached).toEqual(['/docs 200', '/docs/json 200', '/status 200'])
    const page = await t.app.inject({ url: '/docs/' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toContain('text/html')
  })
})
