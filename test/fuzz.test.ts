import { describe, expect } from 'vitest'
import { newId } from '../src/platform/db/ids.js'
import { adminHeaders } from './helpers/app.js'
import { leadsEnv } from './helpers/leads.js'
import { test } from './helpers/tenant-test.js'

/**
 * Walks every operation of the generated OpenAPI document with malformed input and fails on any 5xx,
 * naming the operation and the input: a route added later is covered without being listed here. Calls
 * are authenticated (the admin token for /v1/admin routes, a tenant's token otherwise) so that
 * validation is reached. Provider URLs point at a closed local port or a local fake, so nothing leaves the machine.
 */

const CLOSED_PORT_URL = 'http://127.0.0.1:9'
// Meta's Graph API is the local fake: it refuses the fuzz's tokens as Graph would (400, never a 5xx).
test.override('appEnv', ({ graph }) => ({
  MAIL_PROVIDER: 'outbox',
  SENDGRID_BASE_URL: CLOSED_PORT_URL,
  LISTINGS_API_URL: CLOSED_PORT_URL,
  ...leadsEnv(graph.url),
}))

type Schema = {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minLength?: number
  minimum?: number
  minItems?: number
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  default?: unknown
}
type Parameter = { in: string; name: string; required?: boolean; schema?: Schema }
type Operation = {
  operationId?: string
  parameters?: Parameter[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  security?: Record<string, string[]>[]
}
interface Input {
  path: Record<string, string>
  query: Record<string, string>
  /** A JSON value, or raw text sent as is. */
  body?: unknown
  raw?: string
  contentType?: string
}

const DEEP = 5_000
const deepArray = () => `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`
const HUGE_NUMBERS = ['99999999999999999999999', '18446744073709551616', '-99999999999999999999999', '1e400']
const LONG = 'x'.repeat(20_000)

/** A value the schema accepts, as far as a generic reading of it goes. */
function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return 'x'
  if (schema.const !== undefined) return schema.const
  if (schema.default !== undefined) return schema.default
  if (schema.enum) return schema.enum[0]
  const variant = schema.anyOf?.[0] ?? schema.oneOf?.[0] ?? schema.allOf?.[0]
  if (variant) return sample(variant, depth + 1)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'object': {
      const object: Record<string, unknown> = {}
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        object[name] = sample(property, depth + 1)
      }
      return object
    }
    case 'array':
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => sample(schema.items, depth + 1))
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1)
    case 'boolean':
      return true
    case 'null':
      return null
    default:
      return sampleString(schema)
  }
}

function sampleString(schema: Schema): string {
  if (schema.format === 'email') return 'fuzz@example.com'
  if (schema.format === 'date-time') return '2026-01-01T00:00:00.000Z'
  if (schema.format === 'date') return '2026-01-01'
  if (schema.format === 'uri' || schema.format === 'url') return 'https://example.com/fuzz'
  if (schema.pattern?.includes('0-9a-f')) return newId()
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1))
}

/**
 * Malformed stand-ins for one value, as JSON text (a value nested thousands deep would overflow
 * JSON.stringify): types swapped, NUL, huge numbers, long strings, bad ids, deep nesting.
 */
const BAD_VALUES: string[] = [
  '"a\\u0000b"',
  '12345',
  'true',
  'null',
  '{"nested":"a\\u0000b"}',
  '["a\\u0000b"]',
  '99999999999999999999999',
  '18446744073709551616',
  '-18446744073709551616',
  '1e400',
  '1.5',
  JSON.stringify(LONG),
  '"not-an-id"',
  '"../../etc/passwd"',
  '""',
  '"\\ud800"',
  deepArray(),
  `${'{"a":'.repeat(DEEP)}1${'}'.repeat(DEEP)}`,
]
const MARKER = '"@@fuzz@@"'

/** Malformed stand-ins for a query or path parameter, as the text of the URL carries them. */
const BAD_PARAMETERS = [
  'a\u0000b',
  ...HUGE_NUMBERS,
  '-1',
  '0',
  '1.5',
  'true',
  LONG.slice(0, 10_000),
  'not-an-id',
  '%',
]

function variants(operation: Operation): { label: string; input: Input }[] {
  const parameters = operation.parameters ?? []
  const base: Input = { path: {}, query: {} }
  for (const parameter of parameters) {
    const value = String(sample(parameter.schema))
    if (parameter.in === 'path') base.path[parameter.name] = value
    if (parameter.in === 'query' && parameter.required) base.query[parameter.name] = value
  }
  const content = operation.requestBody?.content ?? {}
  const jsonSchema = content['application/json']?.schema
  const formSchema = content['application/x-www-form-urlencoded']?.schema
  const baseBody = jsonSchema ? sample(jsonSchema) : undefined
  const out: { label: string; input: Input }[] = []
  const add = (label: string, change: Partial<Input>) => out.push({ label, input: { ...base, ...change } })

  for (const parameter of parameters) {
    if (parameter.in !== 'path' && parameter.in !== 'query') continue
    for (const bad of BAD_PARAMETERS) {
      const label = `${parameter.in} ${parameter.name}=${JSON.stringify(bad.slice(0, 40))}`
      add(label, { [parameter.in]: { ...base[parameter.in as 'path' | 'query'], [parameter.name]: bad } })
    }
  }
  if (baseBody !== undefined) {
    add('body as sampled', { body: baseBody })
    add('body {}', { body: {} })
    add('body []', { body: [] })
    add('body "x"', { body: 'x' })
    add('body null', { body: null })
    if (isObject(baseBody)) {
      for (const name of Object.keys(baseBody)) {
        for (const bad of BAD_VALUES) {
          const raw = JSON.stringify({ ...baseBody, [name]: JSON.parse(MARKER) }).replace(MARKER, bad)
          add(`body.${name}=${bad.slice(0, 40)}`, { raw, contentType: 'application/json' })
        }
        const { [name]: _missing, ...rest } = baseBody
        add(`body without ${name}`, { body: rest })
      }
      const nested = Object.entries(baseBody).find(([, value]) => isObject(value) || Array.isArray(value))
      if (nested)
        add(`body.${nested[0]} nested`, { body: { ...baseBody, [nested[0]]: nestedWithNul(nested[1]) } })
    }
  }
  // Every operation gets the framework-level inputs, documented body or not.
  add(`JSON ${DEEP} deep`, { raw: deepArray(), contentType: 'application/json' })
  add('JSON with a byte-order mark', { raw: '\ufeff{}', contentType: 'application/json' })
  add('JSON with \\u0000', { raw: '{"name":"a\\u0000b"}', contentType: 'application/json' })
  add('JSON array of an event with \\u0000 and \\ud800', {
    raw: '[{"event":"a\\u0000b","sg_event_id":"e\\ud800","timestamp":1}]',
    contentType: 'application/json',
  })
  add('JSON not closed', { raw: '{"name":', contentType: 'application/json' })
  add('multipart without boundary', { raw: 'x', contentType: 'multipart/form-data' })
  add('multipart cut short', {
    raw: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="subject"\r\n\r\nab`,
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  })
  add('multipart with a NUL field', {
    raw: multipartWithNul(),
    contentType: `multipart/form-data; boundary=${BOUNDARY}`,
  })
  add('unknown content type', { raw: 'x', contentType: 'application/x-fuzz' })
  add('form with %00', {
    raw: `${formFields(formSchema)}&name=a%00b`,
    contentType: 'application/x-www-form-urlencoded',
  })
  return out
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The value with a NUL character in its first string, one level down. */
function nestedWithNul(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item, i) => (i === 0 ? nestedWithNul(item) : item))
  if (isObject(value)) {
    const [first] = Object.keys(value)
    return first === undefined ? { x: 'a\u0000b' } : { ...value, [first]: nestedWithNul(value[first]) }
  }
  return 'a\u0000b'
}

const BOUNDARY = 'fuzzboundary'
const multipartWithNul = () =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="subject"\r\n\r\na\u0000b\r\n--${BOUNDARY}--\r\n`

function formFields(schema: Schema | undefined): string {
  const sampled = sample(schema)
  if (!isObject(sampled)) return 'x=1'
  return new URLSearchParams(
    Object.entries(sampled).map(([k, v]): [string, string] => [k, String(v)]),
  ).toString()
}

/** OAuth endpoints answer in RFC 6749's error format, and the sign-in pages as HTML: not the envelope. */
const OAUTH_PROTOCOL = /^\/v1\/auth\/oauth\/(authorize|token|introspect|revoke)/

/** Every refusal is the spec's error envelope, wherever it is made (framework, validation, route). */
function isErrorEnvelope(response: { headers: Record<string, unknown>; json: () => unknown }): boolean {
  if (!String(response.headers['content-type']).startsWith('application/json')) return false
  const body = response.json() as Record<string, unknown>
  return body.success === false && typeof body.errno === 'number' && typeof body.message === 'string'
}

function url(path: string, input: Input): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(input.path[name] ?? 'x'),
  )
  const query = new URLSearchParams(input.query).toString()
  return query ? `${filled}?${query}` : filled
}

describe('fuzzing every operation of /docs/json', () => {
  test('answers malformed input with a 4xx in the error envelope, never a 5xx', { timeout: 120_000 }, async ({
    t,
    owner,
  }) => {
    const spec = (await t.app.inject({ url: '/docs/json' })).json() as {
      paths: Record<string, Record<string, Operation>>
    }
    const failures: string[] = []
    let calls = 0
    const started = Date.now()
    for (const [path, operations] of Object.entries(spec.paths)) {
      for (const [method, operation] of Object.entries(operations)) {
        const admin = operation.security?.some((scheme) => 'admin' in scheme)
        const headers = admin ? adminHeaders : owner.headers
        const name = `${method.toUpperCase()} ${path}${operation.operationId ? ` (${operation.operationId})` : ''}`
        for (const { label, input } of variants(operation)) {
          const hasBody = input.raw !== undefined || input.body !== undefined
          if (hasBody && (method === 'get' || method === 'delete')) continue
          const response = await t.app.inject({
            method: method.toUpperCase() as 'GET',
            url: url(path, input),
            headers: {
              ...headers,
              ...(hasBody && { 'content-type': input.contentType ?? 'application/json' }),
            },
            ...(hasBody && { payload: input.raw ?? JSON.stringify(input.body) }),
          })
          calls++
          const refusal = response.statusCode >= 400 && !OAUTH_PROTOCOL.test(path)
          if (response.statusCode >= 500 || (refusal && !isErrorEnvelope(response))) {
            failures.push(`${name} with ${label}: ${response.statusCode} ${response.body.slice(0, 200)}`)
          }
        }
      }
    }
    console.info(`fuzz: ${calls} calls in ${Date.now() - started} ms`)
    expect(calls).toBeGreaterThan(1000)
    expect(failures).toEqual([])
  })
})
