import { Readable } from 'node:stream'
import { AjvCompiler, type ValidatorFactory } from '@fastify/ajv-compiler'
import type { FastifyInstance, FastifyRequest, FastifySchemaValidationError } from 'fastify'
import { type DeferredCompilations, validatorCompiledOnFirstUse } from './compiled-on-first-use.js'
import { DomainError } from './errors.js'

/**
 * Input PostgreSQL cannot take, refused as a 400 naming the field before any route sees it: the NUL
 * character (text and jsonb cannot hold it), JSON nested deeper than any body of the spec or holding more
 * values than any request needs, and a PATCH that sets nothing. Clean requests pay one pass over the raw
 * JSON text, bounded whatever it holds; the rest runs only when it finds something, or on the few values
 * of a query string and path.
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

/** A value the walk visits: what holds it, under which key, so that a pointer is built only when needed. */
interface Visit {
  value: unknown
  key: string
  depth: number
  parent: Visit | undefined
}

/** The JSON pointer of a visited value: its keys from the root down. */
function pointerOf(visit: Visit): string {
  const tokens: string[] = []
  for (let at: Visit | undefined = visit; at?.parent; at = at.parent) tokens.push(token(at.key))
  return tokens.reverse().join('')
}

/**
 * The first value, depth first, that `found` holds for, or undefined. One explicit stack, no recursion:
 * the depth of what it walks costs no call stack, and a JSON body reaches it only within MAX_JSON_VALUES.
 */
function findVisit(root: unknown, found: (visit: Visit) => boolean): Visit | undefined {
  const stack: Visit[] = [{ value: root, key: '', depth: 0, parent: undefined }]
  for (let visit = stack.pop(); visit; visit = stack.pop()) {
    if (found(visit)) return visit
    const { value } = visit
    if (typeof value !== 'object' || value === null) continue
    const children = Object.entries(value)
    for (let i = children.length - 1; i >= 0; i--) {
      const [key, item] = children[i] as [string, unknown]
      stack.push({ value: item, key, depth: visit.depth + 1, parent: visit })
    }
  }
  return undefined
}

/** The JSON pointer of the first string or key holding NUL, or undefined. */
export function findNul(value: unknown): string | undefined {
  const holdsNul = ({ value, key }: Visit) =>
    key.includes(NUL) || (typeof value === 'string' && value.includes(NUL))
  const visit = findVisit(value, holdsNul)
  // Only the last key on the path can hold NUL (the walk stops at the first); it is named written out.
  return visit && pointerOf(visit).replaceAll(NUL, '\\0')
}

/**
 * More values than a request is expected to hold (a builder's page, the largest and free-form, would need
 * 5 MB at 50 bytes a value): a body past it is refused before it is parsed, so that what a body costs is
 * bounded by this, not by its size.
 * Parsing 100,000 values takes a few milliseconds; 1 MB of `[{},{},…]` (350,000) took the JSON parser and
 * the guards' walk 0.3 to 1.2 s (docs/decisions.md, "A body costs a bounded time").
 */
export const MAX_JSON_VALUES = 100_000

const QUOTE = 0x22
const BACKSLASH = 0x5c
const COMMA = 0x2c
const OPEN_ARRAY = 0x5b
const OPEN_OBJECT = 0x7b
const CLOSE_ARRAY = 0x5d
const CLOSE_OBJECT = 0x7d

/** What one pass over JSON text found, before it is parsed. */
interface JsonShape {
  /** Containers and separators seen: each value counts at most once (an empty container twice). */
  values: number
  /** The first container deeper than MAX_JSON_DEPTH, if one is. */
  tooDeep?: TooDeep
}

interface TooDeep {
  /** Where it opens. */
  at: number
  /** The brackets that close every container open there, innermost first. */
  closers: string
}

/**
 * Counts the text's values and finds nesting past MAX_JSON_DEPTH in one pass of its characters, strings
 * skipped (their commas and brackets are text), stopping at MAX_JSON_VALUES or at the first container too
 * deep: whatever the body, this costs at most one look at each character. It validates nothing; the JSON
 * parser does, after it.
 */
function jsonShape(text: string): JsonShape {
  let values = 1
  const open: number[] = []
  for (let at = 0; at < text.length; at++) {
    const code = text.charCodeAt(at)
    if (code === QUOTE) at = stringEnd(text, at)
    else if (code === OPEN_ARRAY || code === OPEN_OBJECT) {
      if (open.length === MAX_JSON_DEPTH) return { values, tooDeep: { at, closers: closersOf(open) } }
      open.push(code)
      if (++values > MAX_JSON_VALUES) break
    } else if (code === CLOSE_ARRAY || code === CLOSE_OBJECT) open.pop()
    else if (code === COMMA && ++values > MAX_JSON_VALUES) break
  }
  return { values }
}

/**
 * The index of the quote closing the string that opens at `at` (or the text's end): the next quote not
 * escaped, i.e. after an even run of backslashes. Found with `indexOf`, which runs natively: a page of HTML
 * in one field (the edge's 5 MB) took 15–60 ms a character at a time, 2–3 ms so.
 */
function stringEnd(text: string, at: number): number {
  for (let quote = text.indexOf('"', at + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote
  }
  return text.length
}

const closersOf = (open: number[]) =>
  open
    .map((code) => (code === OPEN_ARRAY ? ']' : '}'))
    .reverse()
    .join('')

/**
 * The pointer of the container nested too deep: the text up to it, that container replaced by `{}` and
 * every open one closed, is parsed (at most MAX_JSON_VALUES values, MAX_JSON_DEPTH deep), and walked to
 * its one value at MAX_JSON_DEPTH. Text that was no JSON before that point is refused as such.
 */
function tooDeepPointer(text: string, { at, closers }: TooDeep): string {
  const cut = JSON.parse(`${text.slice(0, at)}{}${closers}`) as unknown
  const visit = findVisit(cut, ({ value, depth }) => depth === MAX_JSON_DEPTH && typeof value === 'object')
  return visit ? pointerOf(visit) : ''
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

const tooManyValues = () =>
  new DomainError(413, `The JSON body must hold at most ${MAX_JSON_VALUES} values (array items and fields)`)

/** Refuses JSON text by its shape alone: a 413 past MAX_JSON_VALUES, a 400 naming what nests too deep. */
function refuseByShape(text: string): void {
  const shape = jsonShape(text)
  if (shape.values > MAX_JSON_VALUES) throw tooManyValues()
  if (shape.tooDeep === undefined) return
  const at = tooDeepPointer(text, shape.tooDeep)
  throw validationError('body', [issue('depth', at, `must not nest deeper than ${MAX_JSON_DEPTH} levels`)])
}

export interface JsonParserOptions {
  /** Checks the parsed body before anything walks it (a signature over its top-level fields). */
  verify?: (request: FastifyRequest, body: unknown) => void
}

/**
 * The service's JSON body parser. First one pass over the text, which refuses more than MAX_JSON_VALUES
 * values (413) and nesting deeper than MAX_JSON_DEPTH (400) before the parser builds anything; then
 * Fastify's own parser (prototype-poisoning checks, a byte-order mark ignored), the scope's `verify`, and
 * a refusal of NUL, looked for in the parsed body only when the raw text holds its escape. Every scope
 * inherits it; a scope registers it again to verify its bodies (the edge's), and one that parses its own
 * bodies (the signed webhooks) keeps its parser.
 */
export function registerJsonParser(app: FastifyInstance, options: JsonParserOptions = {}): void {
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const { verify } = options
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    const refused = thrownBy(() => refuseByShape(text as string))
    if (refused) return done(refused, undefined)
    parseJson(request, text as string, (error, body) => {
      if (error) return done(error, undefined)
      const unverified = verify && thrownBy(() => verify(request, body))
      if (unverified) return done(unverified, undefined)
      const nulAt = (text as string).includes(NUL_ESCAPE) ? findNul(body) : undefined
      if (nulAt !== undefined) return done(validationError('body', [nulIssue(nulAt)]), undefined)
      if (typeof body === 'object' && body !== null) checkedBodies.add(body)
      done(null, body)
    })
  })
}

/** What `check` threw, or undefined; JSON.parse's SyntaxError is bad JSON, answered 400 as Fastify's parser does. */
function thrownBy(check: () => void): Error | undefined {
  try {
    check()
    return undefined
  } catch (error) {
    return error instanceof SyntaxError ? Object.assign(error, { statusCode: 400 }) : (error as Error)
  }
}

/** More fields than any form the service takes (an OAuth request, Twilio's SMS webhook: some tens). */
export const MAX_FORM_FIELDS = 1000
const AMPERSAND = 0x26

const tooManyFields = () => new DomainError(413, `The form must hold at most ${MAX_FORM_FIELDS} fields`)

/**
 * Counts a form's fields as its bytes arrive (each `&` starts one: it is never part of an encoded name or
 * value) and ends the request with a 413 past MAX_FORM_FIELDS, before a parser makes an object of them.
 * The form parsers are the modules' own (@fastify/formbody, the unsubscribe route's): this bounds them all.
 */
export function boundFormFields(app: FastifyInstance): void {
  app.addHook('preParsing', async (request, _reply, payload) => {
    if (!request.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) return payload
    // Pulled by the parser as it reads, so that the 413 reaches it; a route that reads no body pulls nothing.
    return Readable.from(countedFields(payload))
  })
}

async function* countedFields(payload: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  let fields = 1
  for await (const chunk of payload) {
    for (let at = chunk.indexOf(AMPERSAND); at !== -1; at = chunk.indexOf(AMPERSAND, at + 1)) fields++
    if (fields > MAX_FORM_FIELDS) throw tooManyFields()
    yield chunk
  }
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
