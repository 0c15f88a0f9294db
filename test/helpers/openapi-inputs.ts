import type { FastifyInstance } from 'fastify'
import { newId } from '../../src/platform/db/ids.js'
import { adminHeaders } from './app.js'
import { inlineRefs } from './openapi-document.js'

/** The parts of the generated OpenAPI document that the fuzz tests read. */
export type Schema = {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  enum?: unknown[]
  const?: unknown
  format?: string
  pattern?: string
  minLength?: number
  maxLength?: number
  minimum?: number
  minItems?: number
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  default?: unknown
}
export type Parameter = { in: string; name: string; required?: boolean; schema?: Schema }
export type Operation = {
  operationId?: string
  parameters?: Parameter[]
  requestBody?: { content?: Record<string, { schema?: Schema }> }
  security?: Record<string, string[]>[]
  responses?: Record<string, unknown>
}
export interface Input {
  path: Record<string, string>
  query: Record<string, string>
  headers?: Record<string, string>
  /** A JSON value, or raw text sent as is. */
  body?: unknown
  raw?: string
  contentType?: string
}
export interface DocumentedOperation {
  path: string
  method: string
  operation: Operation
  /** `POST /path (operationId)`, for failure messages. */
  name: string
  /** The admin token for /v1/admin routes, the tenant's token otherwise, so that validation is reached. */
  headers: Record<string, string>
}

/** Every operation of the app's `/docs/json`, with the headers that authenticate a call of it. */
export async function documentedOperations(
  app: FastifyInstance,
  tenantHeaders: Record<string, string>,
): Promise<DocumentedOperation[]> {
  const document = (await app.inject({ url: '/docs/json' })).json()
  const paths = document.paths as Record<string, Record<string, Operation>>
  return Object.entries(paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => ({
      path,
      method,
      // A named body is a reference: what is sent is read in place. Answers keep their envelopes' names.
      operation: {
        ...operation,
        requestBody: inlineRefs(document, operation.requestBody) as Operation['requestBody'],
        parameters: inlineRefs(document, operation.parameters) as Operation['parameters'],
      },
      name: `${method.toUpperCase()} ${path}${operation.operationId ? ` (${operation.operationId})` : ''}`,
      headers: operation.security?.some((scheme) => 'admin' in scheme) ? adminHeaders : tenantHeaders,
    })),
  )
}

/** A schema's first alternative, the one `sample` fills. */
export const variantOf = (schema: Schema) => schema.anyOf?.[0] ?? schema.oneOf?.[0] ?? schema.allOf?.[0]
export const typeOf = (schema: Schema) => (Array.isArray(schema.type) ? schema.type[0] : schema.type)

/** A value the schema accepts, as far as a generic reading of it goes. */
export function sample(schema: Schema | undefined, depth = 0): unknown {
  if (!schema || depth > 8) return 'x'
  if (schema.const !== undefined) return schema.const
  if (schema.default !== undefined) return schema.default
  if (schema.enum) return schema.enum[0]
  const variant = variantOf(schema)
  if (variant) return sample(variant, depth + 1)
  switch (typeOf(schema)) {
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

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** The operation's path and required query parameters, sampled: the input every variant changes one part of. */
export function baseInput(operation: Operation): Input {
  const input: Input = { path: {}, query: {} }
  for (const parameter of operation.parameters ?? []) {
    const value = String(sample(parameter.schema))
    if (parameter.in === 'path') input.path[parameter.name] = value
    if (parameter.in === 'query' && parameter.required) input.query[parameter.name] = value
  }
  return input
}

/** The body's schema and how it is sent: JSON when the operation takes it, a form otherwise. */
export function bodySchemaOf(operation: Operation): { schema: Schema; contentType: string } | undefined {
  const content = operation.requestBody?.content ?? {}
  for (const contentType of ['application/json', 'application/x-www-form-urlencoded']) {
    const schema = content[contentType]?.schema
    if (schema) return { schema, contentType }
  }
  return undefined
}

/** OAuth endpoints answer in RFC 6749's error format, and the sign-in pages as HTML: not the envelope. */
const OAUTH_PROTOCOL = /^\/v1\/auth\/oauth\/(authorize|token|introspect|revoke)/

/**
 * Every refusal is in the error envelope the operation documents, wherever it is made (framework, validation,
 * route): the spec's `{ success: false, errno, message }`, or `{ status: false, … }` where its error answers
 * name the StatusErrorEnvelope (the changelog feed's).
 */
export function answersInEnvelope(
  { path, operation }: DocumentedOperation,
  response: { headers: Record<string, unknown>; json: () => unknown },
): boolean {
  if (OAUTH_PROTOCOL.test(path)) return true
  if (!String(response.headers['content-type']).startsWith('application/json')) return false
  const body = response.json() as Record<string, unknown>
  const flag = JSON.stringify(operation.responses ?? {}).includes('StatusErrorEnvelope')
    ? 'status'
    : 'success'
  return body[flag] === false && typeof body.errno === 'number' && typeof body.message === 'string'
}

/** The `message` of a JSON answer; undefined for HTML, text or a body without one. */
export function messageOf(response: { headers: Record<string, unknown>; body: string }): string | undefined {
  if (!String(response.headers['content-type']).startsWith('application/json')) return undefined
  const { message } = JSON.parse(response.body) as { message?: unknown }
  return typeof message === 'string' ? message : undefined
}

function url(path: string, input: Input): string {
  const filled = path.replace(/\{([^}]+)\}/g, (_, name: string) =>
    encodeURIComponent(input.path[name] ?? 'x'),
  )
  const query = new URLSearchParams(input.query).toString()
  return query ? `${filled}?${query}` : filled
}

/**
 * An address of its own for each call (TEST-NET-2, 198.51.100.0/24, counted round): the malformed inputs
 * include wrong admin tokens (the outbox sign-in's), which from one address would have it refused, the right
 * token too, once the admin credential limit is reached, and every later admin call of the run with it.
 */
let calls = 0
const nextSource = () => `198.51.100.${(calls++ % 254) + 1}`

/** Calls the operation with `input`; undefined for a body on a GET or DELETE, which is not sent. */
export function call(app: FastifyInstance, { path, method, headers }: DocumentedOperation, input: Input) {
  const hasBody = input.raw !== undefined || input.body !== undefined
  if (hasBody && (method === 'get' || method === 'delete')) return undefined
  return app.inject({
    method: method.toUpperCase() as 'GET',
    url: url(path, input),
    remoteAddress: nextSource(),
    headers: {
      ...headers,
      ...input.headers,
      ...(hasBody && { 'content-type': input.contentType ?? 'application/json' }),
    },
    ...(hasBody && { payload: input.raw ?? JSON.stringify(input.body) }),
  })
}
