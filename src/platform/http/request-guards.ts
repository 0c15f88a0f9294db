import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifySchemaValidationError } from 'fastify'
import { type DeferredCompilations, validatorCompiledOnFirstUse } from './compiled-on-first-use.js'

/**
 * Input PostgreSQL cannot take, refused as a 400 naming the field before any route sees it: the NUL
 * character (text and jsonb cannot hold it), JSON nested deeper than any body of the spec, and a PATCH
 * that sets nothing. Clean requests pay one scan of the raw JSON text; the rest runs only when it finds
 * something, or on the few values of a query string and path.
 */

/** Deeper than any body of the spec; far below what JSON.stringify or PostgreSQL's jsonb parser can take. */
export const MAX_JSON_DEPTH = 64

const NUL = '\u0000'
/** How NUL appears in JSON text (raw control characters are refused by JSON.parse already). */
const NUL_ESCAPE = '\\u0000'

type ValidationIssue = Pick<
  FastifySchemaValidationError,
  'keyword' | 'instancePath' | 'params' | 'message'
> & {
  schemaPath: string
}

const issue = (keyword: string, instancePath: string, message: string): ValidationIssue => ({
  keyword,
  instancePath,
  schemaPath: '#',
  params: {},
  message,
})

/** The JSON pointer token of a key: built only once a finding is on its path. */
const token = (key: string) => `/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`

/** The JSON pointer of the first string or key holding NUL, or undefined. */
export function findNul(value: unknown): string | undefined {
  if (typeof value === 'string') return value.includes(NUL) ? '' : undefined
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, item] of Object.entries(value)) {
    if (key.includes(NUL)) return token(key.replaceAll(NUL, '\\0'))
    const found = findNul(item)
    if (found !== undefined) return token(key) + found
  }
  return undefined
}

/** The JSON pointer of the first value nested deeper than MAX_JSON_DEPTH, or undefined. */
function findTooDeep(value: unknown, depth = 0): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  if (depth >= MAX_JSON_DEPTH) return ''
  for (const [key, item] of Object.entries(value)) {
    const found = findTooDeep(item, depth + 1)
    if (found !== undefined) return token(key) + found
  }
  return undefined
}

const nulIssue = (at: string) => issue('nul', at, 'must not contain the NUL character (\\u0000)')

/** A 400 the error handler answers like a schema validation error, naming the field. */
function validationError(context: string, issues: ValidationIssue[]) {
  return Object.assign(new Error(issues[0]?.message ?? 'invalid'), {
    statusCode: 400,
    validation: issues,
    validationContext: context,
  })
}

/**
 * The service's JSON body parser: Fastify's own (prototype-poisoning checks, a byte-order mark ignored),
 * then a refusal of NUL, looked for in the parsed body only when the raw text holds its escape, and of
 * nesting deeper than MAX_JSON_DEPTH. Every scope inherits it; a scope that parses its own bodies (the
 * signed delivery-events webhook) keeps its parser.
 */
export function registerJsonParser(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    parseJson(request, text as string, (error, body) => {
      if (error) return done(error, undefined)
      const nulAt = (text as string).includes(NUL_ESCAPE) ? findNul(body) : undefined
      if (nulAt !== undefined) return done(validationError('body', [nulIssue(nulAt)]), undefined)
      const deepAt = findTooDeep(body)
      if (deepAt !== undefined) {
        const tooDeep = issue('depth', deepAt, `must not nest deeper than ${MAX_JSON_DEPTH} levels`)
        return done(validationError('body', [tooDeep]), undefined)
      }
      if (typeof body === 'object' && body !== null) checkedBodies.add(body)
      done(null, body)
    })
  })
}

/**
 * A query string a route reads nothing from: validated all the same, so that NUL is refused there too.
 * `properties`, empty, constrains nothing; without it the OpenAPI document would read the schema's own
 * keys as the query's parameters (a parameter `type` whose schema is the string "object").
 */
const ANY_QUERY = { type: 'object', properties: {} }

/**
 * Guards every route's query string: a name or value that is not percent-encoded UTF-8 is refused before
 * anything else runs (Fastify's parser would pass `%E2%80` on as those six characters), and every route
 * gets a query string schema, so that the guarded validator refuses NUL in any query value, including on
 * routes that read no query (a value they ignore could still reach a log line).
 */
export function guardEveryQuery(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const malformed = malformedQueryParameter(request.url)
    if (malformed !== undefined) {
      throw validationError('querystring', [
        issue('encoding', token(malformed), 'must be UTF-8, percent-encoded (e.g. … as %E2%80%A6)'),
      ])
    }
  })
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, querystring: route.schema?.querystring ?? ANY_QUERY }
  })
}

const decodes = (text: string) => {
  try {
    decodeURIComponent(text)
    return true
  } catch {
    return false
  }
}

/**
 * The name of the first query parameter whose name or value does not decode (a cut or invalid UTF-8
 * sequence, `%` without two hex digits), as far as it decodes; undefined when all do. Only a query
 * holding `%` is looked at (raw non-ASCII bytes never get this far: see `clientErrors`).
 */
export function malformedQueryParameter(url: string): string | undefined {
  const query = url.slice(url.indexOf('?') + 1 || url.length)
  if (!query.includes('%')) return undefined
  for (const pair of query.split('&')) {
    const separator = pair.indexOf('=')
    const name = (separator < 0 ? pair : pair.slice(0, separator)).replaceAll('+', ' ')
    const value = separator < 0 ? '' : pair.slice(separator + 1)
    if (!decodes(name)) return name
    if (!decodes(value)) return decodeURIComponent(name)
  }
  return undefined
}

type Validate = ((data: unknown, context?: unknown) => unknown) & {
  errors?: unknown
  schemaEnv?: unknown
}
/** What Fastify asks of a validator compiler (the library's types describe Ajv's own `compile`). */
interface CompileRequest {
  schema: unknown
  method: string
  url: string
  httpPart: string
}
type Compile = (route: CompileRequest) => Validate
type BuildValidator = (externalSchemas: unknown, options: unknown) => Compile

/** Bodies the JSON parser has looked at already: the validator does not walk them again. */
const checkedBodies = new WeakSet<object>()

/**
 * The validator of one request part, refusing NUL first (in query strings, path parameters, and bodies
 * that did not come through the JSON parser: forms, multipart fields) and, for a PATCH, a body that
 * names none of the fields it may set.
 */
function guarded(validate: Validate, route: CompileRequest): Validate {
  const { httpPart, method } = route
  if (httpPart !== 'querystring' && httpPart !== 'params' && httpPart !== 'body') return validate
  const settable = method === 'PATCH' && httpPart === 'body' ? settableFields(route.schema) : undefined
  const numeric = numericFields(route.schema)
  const wrapped: Validate = (data, context) => {
    const fromText = !(typeof data === 'object' && data !== null && checkedBodies.has(data))
    const nulAt = fromText ? findNul(data) : undefined
    if (nulAt !== undefined) {
      wrapped.errors = [nulIssue(nulAt)]
      return false
    }
    const valid = validate(data, context)
    wrapped.errors = validate.errors
    // Ajv coerces "1e400" to Infinity and then skips `maximum` (it compares finite numbers only).
    const infiniteAt = valid && fromText && numeric.length > 0 ? findInfinite(data, numeric) : undefined
    if (infiniteAt !== undefined) {
      wrapped.errors = [issue('finite', infiniteAt, 'must be a finite number')]
      return false
    }
    if (
      valid &&
      settable &&
      !settable.some((field) => (data as Record<string, unknown>)[field] !== undefined)
    ) {
      wrapped.errors = [issue('settable', '', `must set at least one of: ${settable.join(', ')}`)]
      return false
    }
    return valid
  }
  // Fastify passes the parent object (so that Ajv can replace a coerced root) only to validators that have it.
  wrapped.schemaEnv = validate.schemaEnv
  return wrapped
}

/** The pointer of a numeric field coerced from text to an infinite number, or undefined. */
function findInfinite(data: unknown, numeric: string[]): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined
  for (const key of numeric) {
    const value = (data as Record<string, unknown>)[key]
    if (typeof value === 'number' && !Number.isFinite(value)) return token(key)
  }
  return undefined
}

interface PropertySchema {
  type?: unknown
  anyOf?: PropertySchema[]
  oneOf?: PropertySchema[]
}

const propertiesOf = (schema: unknown) =>
  (schema as { properties?: Record<string, PropertySchema> } | undefined)?.properties ?? {}

function settableFields(schema: unknown): string[] | undefined {
  const fields = Object.keys(propertiesOf(schema))
  return fields.length > 0 ? fields : undefined
}

/** The top-level fields a number may be coerced into: only they are checked for Infinity. */
function numericFields(schema: unknown): string[] {
  const isNumericType = (type: unknown): boolean =>
    type === 'number' || type === 'integer' || (Array.isArray(type) && type.some(isNumericType))
  const isNumeric = (property: PropertySchema | undefined): boolean =>
    isNumericType(property?.type) || [...(property?.anyOf ?? []), ...(property?.oneOf ?? [])].some(isNumeric)
  return Object.entries(propertiesOf(schema))
    .filter(([, property]) => isNumeric(property))
    .map(([field]) => field)
}

/**
 * Fastify's `schemaController.compilersFactory.buildValidator`: its Ajv compiler, each validator guarded and
 * compiled on first use.
 */
export function guardedValidatorBuilder(deferred?: DeferredCompilations): ValidatorFactory {
  const build = AjvCompiler() as unknown as BuildValidator
  const guardedBuild: BuildValidator = (externalSchemas, options) => {
    const compile = build(externalSchemas, options)
    return (route) => validatorCompiledOnFirstUse(() => guarded(compile(route), route), deferred)
  }
  return guardedBuild as unknown as ValidatorFactory
}
