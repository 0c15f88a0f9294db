import { describe, expect } from 'vitest'
import { newId } from '../src/platform/db/ids.js'
import { leadsEnv } from './helpers/leads.js'
import { longStringVariants, rowCounter } from './helpers/long-strings.js'
import {
  answersInEnvelope,
  baseInput,
  call,
  documentedOperations,
  type Input,
  isObject,
  messageOf,
  type Operation,
  type Schema,
  sample,
} from './helpers/openapi-inputs.js'
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

const DEEP = 5_000
const deepArray = () => `${'['.repeat(DEEP)}${']'.repeat(DEEP)}`
const HUGE_NUMBERS = ['99999999999999999999999', '18446744073709551616', '-99999999999999999999999', '1e400']
const LONG = 'x'.repeat(20_000)

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
  const base = baseInput(operation)
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
  add('multipart cut short in a file', {
    raw: `--${BOUNDARY}\r\nContent-Disposition: form-data; name="attachments"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nab`,
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

describe('fuzzing every operation of /docs/json', () => {
  test('answers malformed input with a 4xx in the error envelope, never a 5xx', { timeout: 120_000 }, async ({
    t,
    owner,
  }) => {
    const failures: string[] = []
    let calls = 0
    const started = Date.now()
    for (const documented of await documentedOperations(t.app, owner.headers)) {
      for (const { label, input } of variants(documented.operation)) {
        const response = await call(t.app, documented, input)
        if (!response) continue
        calls++
        if (
          response.statusCode >= 500 ||
          (response.statusCode >= 400 && !answersInEnvelope(documented, response))
        ) {
          failures.push(
            `${documented.name} with ${label}: ${response.statusCode} ${response.body.slice(0, 200)}`,
          )
        }
      }
    }
    console.info(`fuzz: ${calls} calls in ${Date.now() - started} ms`)
    expect(calls).toBeGreaterThan(1000)
    expect(failures).toEqual([])
  })
})

/** Tables a refusal writes to by design: the audit of failed client authentications. */
const RECORDS_OF_REFUSALS = ['oauth_audit_events']

/** A 400 of schema validation (its details name the fields): the handler never ran, so stored nothing. */
function refusedBySchema(response: { statusCode: number; headers: Record<string, unknown>; body: string }) {
  if (response.statusCode !== 400 || messageOf(response) === undefined) return false
  const details = (JSON.parse(response.body) as { additional_info?: unknown }).additional_info
  return Array.isArray(details) && details.every((detail) => isObject(detail) && 'field' in detail)
}

/**
 * A megabyte `reference` reached a unique index, which PostgreSQL refuses past ~2,700 bytes (54000):
 * a 500. Every string field of every operation (path, query, header, body at any depth) gets a megabyte of
 * random text (which no compression shrinks), then as many four-byte characters as its maxLength allows.
 */
describe('a megabyte in every string field of /docs/json', () => {
  test('is refused with a 400 naming the field, or taken, never a 5xx; a refusal writes nothing', {
    timeout: 120_000,
  }, async ({ t, owner, bystander }) => {
    const rowCounts = await rowCounter(t.app.platform.db)
    const failures: string[] = []
    let calls = 0
    const started = Date.now()
    let counts: Record<string, number>
    for (const documented of await documentedOperations(t.app, owner.headers)) {
      // Admin routes act on the bystander, so that what they store (a listings entity) changes no call of the owner's.
      // Its removal is asked of an unknown account (404): the bystander's would delete rows while later calls are counted.
      const ids =
        documented.operation.operationId === 'accountRemove'
          ? { ...bystander, accountId: newId() }
          : bystander
      const { base, variants } = longStringVariants(documented.path, documented.operation, ids)
      const baseAnswer = await call(t.app, documented, base)
      const baseMessage = baseAnswer && messageOf(baseAnswer)
      counts = await rowCounts()
      for (const { field, label, input } of variants) {
        const response = await call(t.app, documented, input)
        if (!response) continue
        calls++
        const { statusCode, body } = response
        const failure = (problem: string) =>
          failures.push(`${documented.name} with ${label}: ${problem}: ${statusCode} ${body.slice(0, 200)}`)
        if (statusCode >= 500) failure('a server error')
        const message = messageOf(response)
        // A 400 the sampled input gets anyway is about another field.
        if (
          statusCode === 400 &&
          message &&
          message !== baseMessage &&
          !message.toLowerCase().includes(field.toLowerCase())
        )
          failure(`a 400 not naming ${field}`)
        if (refusedBySchema(response)) continue
        const before = counts
        counts = await rowCounts()
        const written = Object.keys(counts).filter(
          (table) => counts[table] !== before[table] && !RECORDS_OF_REFUSALS.includes(table),
        )
        if (statusCode >= 400 && written.length)
          failure(`refused, yet rows were written in ${written.join(', ')}`)
      }
    }
    console.info(`fuzz, long strings: ${calls} calls in ${Date.now() - started} ms`)
    expect(calls).toBeGreaterThan(300)
    expect(failures).toEqual([])
  })
})
