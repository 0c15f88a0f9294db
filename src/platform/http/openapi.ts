import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import { LIST_TOTAL_CAP, PAGE_REACH } from '../db/page.js'

/**
 * The edge's calls carry no JWT but an HMAC of their fields (ARCHITECTURE.md): a scheme of their own, named
 * by the routes' access `edgeSignature`. OpenAPI 3.0 has no key carried in a body, so it names the query
 * field of the GET; the POST carries the same fields in its JSON body, where its schema documents them.
 */
const EDGE_SIGNATURE = {
  type: 'apiKey',
  in: 'query',
  name: '_sig',
  description:
    'How the edge worker calls the funnel step routes. Obtain: the edge worker holds `EDGE_SIGNING_SECRET` ' +
    '(set by the deployment, or generated into DATA_DIR/secrets.json by a development server). `_sig` is the ' +
    'lowercase hex HMAC-SHA256, with that secret, of the method, the path, `_ts` (Unix seconds, 300 s either ' +
    'way) and the other fields sorted by key: `_sig` and `_ts` in the query string of a GET, in the JSON body ' +
    'of a POST.',
} as const

/** What every scheme that authenticates an account adds to its description (platform/http/account-budget.ts). */
const ACCOUNT_BUDGET =
  " Every request authenticated as an account counts against the account's request budget (ACCOUNT_REQUEST_BUDGET " +
  'a window, all its users and apps together): each answer carries `RateLimit-Policy` and `RateLimit` ' +
  '(draft-ietf-httpapi-ratelimit-headers), e.g. `RateLimit-Policy: "account";q=6000;w=60` and ' +
  '`RateLimit: "account";r=5999;t=42` (requests left, seconds until the window ends); past it 429 with Retry-After.'

const PLATFORM_JWT =
  'A platform JWT: a user acting in one account. Obtain: the operator mints it with the admin API, ' +
  '`POST /v1/admin/tokens` with `{"user_id", "account_id", "ttl"}` (ttl in seconds, default 3600), or the CLI, ' +
  '`npm run cli -- token --user <id> --account <id>` (`quickstart` creates an account, a user and a token at ' +
  'once). Send it as `Authorization: Bearer <token>`. It stops working when it expires, when the user leaves ' +
  'the account, or when the account is suspended (403).'

const ADMIN =
  "The operator's token of the admin API under `/v1/admin`. Obtain: it is `ADMIN_TOKEN` (required in " +
  'production; a development server generates one into DATA_DIR/secrets.json, `adminToken`). Send it as ' +
  '`Authorization: Bearer <ADMIN_TOKEN>`.'

const OAUTH2 =
  "A third-party app's access token (an ES256 JWT, keys at `/.well-known/jwks.json`), for the scopes its " +
  'grant holds. Obtain: the operator registers the app (`POST /v1/admin/oauth/apps`: it answers the ' +
  '`client_id` and, this once, the `client_secret`), send the user to `/v1/auth/oauth/authorize` with ' +
  '`response_type=code`, the scopes, a `state` and a PKCE `code_challenge` (S256), then exchange the code at ' +
  "`POST /v1/auth/oauth/token` (`grant_type=authorization_code`, with the client's credentials and the " +
  '`code_verifier`); refresh it there with `grant_type=refresh_token`. Production requires HTTPS for both.'

/** The document's introduction: what a caller needs before the first call (Markdown, shown atop /docs). */
const INTRODUCTION = `The backend of a multi-tenant marketing platform: accounts with their users, contacts, email
(sending, delivery events, inbound mail), reviews, funnels (sites, pages, forms), chat rooms and leads. Every
resource belongs to one account, and a caller acts in one account at a time.

## Authentication
- **bearer**: a platform JWT, a user in an account, minted by the operator (\`POST /v1/admin/tokens\` or
  \`npm run cli -- token\`). \`Authorization: Bearer <token>\`.
- **oauth2**: a third-party app's access token (authorization code with PKCE at \`/v1/auth/oauth/authorize\`
  and \`/v1/auth/oauth/token\`); each route names the scope it needs, which a platform JWT has in full.
- **admin**: \`ADMIN_TOKEN\`, for the operator's API under \`/v1/admin\`.
- **edgeSignature**: the edge worker's HMAC, for the funnel step routes only.

Each scheme below says how to obtain its token. Webhooks (\`/webhooks/...\`, \`.../webhook...\`) take none: their
provider's signature header is among their parameters.

## Envelopes
A success answers \`{ "success": true, "message": "SUCCESS", "data": ... }\`; lists add \`pagination\`. An error
answers \`{ "success": false, "errno": <HTTP status>, "message": "...", "additional_info": ... }\`
(\`ErrorEnvelope\`); a 400 names the field or the rule refused. Some areas keep the shapes of their spec: the
chat rooms answer bare bodies, the changelog feed \`{ pagination, data }\` and errors flagged \`status: false\`
(\`StatusErrorEnvelope\`), the OAuth endpoints RFC 6749's \`{ "error", "error_description" }\`.

## Pagination
Lists take \`page\` (from 1) and \`limit\` and answer \`pagination: { total, page, limit, pages }\`. \`total\`
counts at most ${LIST_TOTAL_CAP.toLocaleString('en')} rows (then \`total_exact: false\`), and a page starts fewer than
${PAGE_REACH.toLocaleString('en')} rows deep. Lists that grow without end also read by \`cursor\`: send \`cursor=\` for the first
page, then each page's \`pagination.next_cursor\` (null on the last); such pages are not counted.

## Rate limits
Every request authenticated as an account counts against the account's request budget (\`RateLimit-Policy\`
and \`RateLimit\` headers on each answer); past it, 429 with \`Retry-After\`. An account's requests in flight
beyond its share of the database, and some routes (the OAuth token endpoint, form submissions, sign-in)
have limits of their own: 429 with \`Retry-After\` too. A dependency that does not answer in time (the
database, Redis) gives 503, with \`Retry-After\` where it knows when.

The document itself is at [/docs/json](/docs/json) (OpenAPI 3.0), for client generators.`

/** The options of the OpenAPI document at `/docs/json`: its introduction, security schemes and components. */
export function openApiOptions(scopes: Record<string, string>): FastifyDynamicSwaggerOptions {
  return {
    // Shared schemas keep their $id as their component name (ErrorEnvelope), not def-N.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      info: { title: 'Platform backend', version: '1.0.0', description: INTRODUCTION },
      // Relative: wherever the document is served from.
      servers: [{ url: '/', description: 'This service' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: `${PLATFORM_JWT}${ACCOUNT_BUDGET}`,
          },
          admin: { type: 'http', scheme: 'bearer', description: ADMIN },
          oauth2: {
            type: 'oauth2',
            description: `${OAUTH2}${ACCOUNT_BUDGET}`,
            flows: {
              authorizationCode: {
                authorizationUrl: '/v1/auth/oauth/authorize',
                tokenUrl: '/v1/auth/oauth/token',
                refreshUrl: '/v1/auth/oauth/token',
                scopes,
              },
            },
          },
          edgeSignature: EDGE_SIGNATURE,
        },
      },
    },
    transformObject: (document) =>
      'openapiObject' in document
        ? withNamedSchemas(withAnswers(withDefaultsOptional(asOpenApi30(document.openapiObject))))
        : document.swaggerObject,
  }
}

/** Values, not schemas: what they hold is data, never rewritten. */
const DATA_KEYWORDS = new Set(['example', 'examples', 'default', 'enum', 'const'])

/**
 * The document with the JSON Schema keywords Ajv validates but OpenAPI 3.0 does not know rewritten:
 * a numeric `exclusiveMinimum`/`exclusiveMaximum` becomes 3.0's bound with a boolean, and `propertyNames`
 * an extension (`x-propertyNames`). The routes' schemas, which validate requests, are left as they are.
 */
function asOpenApi30<T>(value: T): T {
  if (Array.isArray(value)) return value.map(asOpenApi30) as T
  if (typeof value !== 'object' || value === null) return value
  const rewritten: Record<string, unknown> = {}
  for (const [key, item] of Object.entries(value)) {
    if (key === 'propertyNames') rewritten['x-propertyNames'] = item
    else if (key === 'properties') rewritten[key] = schemasOf(item)
    else rewritten[key] = DATA_KEYWORDS.has(key) ? item : asOpenApi30(item)
  }
  exclusiveBound(rewritten, 'exclusiveMinimum', 'minimum', Math.max)
  exclusiveBound(rewritten, 'exclusiveMaximum', 'maximum', Math.min)
  return rewritten as T
}

/** A schema's `properties`: their names are the data's, never keywords. */
const schemasOf = (properties: unknown) =>
  typeof properties === 'object' && properties !== null
    ? Object.fromEntries(Object.entries(properties).map(([name, schema]) => [name, asOpenApi30(schema)]))
    : properties

/** `exclusiveMinimum: 0` as 3.0 says it, `minimum: 0, exclusiveMinimum: true`, unless `minimum` is stricter. */
function exclusiveBound(
  schema: Record<string, unknown>,
  exclusive: 'exclusiveMinimum' | 'exclusiveMaximum',
  inclusive: 'minimum' | 'maximum',
  stricter: (a: number, b: number) => number,
): void {
  const bound = schema[exclusive]
  if (typeof bound !== 'number') return
  const other = schema[inclusive]
  if (typeof other === 'number' && stricter(bound, other) === other && other !== bound) {
    delete schema[exclusive]
    return
  }
  schema[inclusive] = bound
  schema[exclusive] = true
}

interface Operation {
  parameters?: { in: string; required?: boolean; schema?: { default?: unknown } }[]
  requestBody?: { content?: Record<string, { schema?: ObjectSchema }> }
}
interface ObjectSchema {
  required?: string[]
  properties?: Record<string, ObjectSchema & { default?: unknown }>
  items?: ObjectSchema
}

/**
 * The document (a copy of its own) with what a caller may leave out marked so: a query or header parameter,
 * or a body field, that has a default. The schemas validating requests list those as required, and the
 * validator puts the default in before checking (Ajv's `useDefaults`); a client must not be made to send
 * them.
 */
function withDefaultsOptional<T extends { paths?: object }>(document: T): T {
  for (const item of Object.values(document.paths ?? {}) as Record<string, Operation>[]) {
    for (const operation of Object.values(item)) {
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in !== 'path' && parameter.schema?.default !== undefined) parameter.required = false
      }
      for (const media of Object.values(operation.requestBody?.content ?? {})) defaultsOptional(media.schema)
    }
  }
  return document
}

function defaultsOptional(schema: ObjectSchema | undefined): void {
  if (!schema) return
  const properties = schema.properties ?? {}
  if (schema.required) {
    const required = schema.required.filter((name) => properties[name]?.default === undefined)
    if (required.length > 0) schema.required = required
    else delete schema.required
  }
  for (const property of Object.values(properties)) defaultsOptional(property)
  defaultsOptional(schema.items)
}

/** What an answer of each status means, where the route says nothing more precise (its `answers`). */
const ANSWERS: Record<string, string> = {
  200: 'Success',
  201: 'Created',
  202: 'Accepted: the work continues in the background',
  204: 'Done: no content',
  302: 'Found: `Location` says where to go',
  303: 'See other: `Location` says where to go',
  400: 'Invalid request: `message` names the field, or the rule the request breaks',
  401: 'Missing, expired or revoked credentials: `WWW-Authenticate` names the scheme expected',
  403: "Not allowed: the account is not active, the token lacks the route's scope, or the signature is wrong",
  404: "Not found: nothing with this id in the caller's account",
  405: 'Method not allowed',
  409: 'Conflict with the current state: `message` says which',
  410: 'Gone',
  413: "The body is larger than the route's limit",
  415: 'Unsupported content type',
  422: 'Understood, but refused by a rule: `message` says which',
  429: 'Too many requests: retry after `Retry-After` seconds',
  500: 'Internal error',
  502: 'A provider answered with an error: `message` and `additional_info` say which',
  503: 'A dependency (the database, Redis, a provider) did not answer in time: retry, after `Retry-After` when given',
}

interface Media {
  schema?: Schema
  example?: unknown
}
interface Answered {
  description?: string
  content?: Record<string, Media>
}
interface RequestBody {
  required?: boolean
  description?: string
  content?: Record<string, Media>
}
interface DocumentedOperation {
  responses?: Record<string, Answered>
  requestBody?: RequestBody | { $ref: string }
  'x-answers'?: Record<string, string>
  'x-example'?: { body?: unknown; response?: unknown }
}

/**
 * Each answer described (the route's `answers`, else its status's), and the route's example put beside the
 * request body and its first success answer (the media type's `example`, which OpenAPI 3.0 shows there).
 */
function withAnswers<T extends { paths?: object }>(document: T): T {
  for (const item of Object.values(document.paths ?? {}) as Record<string, DocumentedOperation>[]) {
    for (const operation of Object.values(item)) {
      const { 'x-answers': answers = {}, 'x-example': example = {} } = operation
      delete operation['x-answers']
      delete operation['x-example']
      const responses = operation.responses ?? {}
      for (const [status, answer] of Object.entries(responses)) {
        answer.description = answers[status] ?? ANSWERS[status] ?? answer.description
      }
      const body = operation.requestBody
      if (example.body !== undefined && body && 'content' in body) exemplify(body.content, example.body)
      const success = Object.keys(responses).find((status) => status.startsWith('2'))
      if (example.response !== undefined && success) exemplify(responses[success]?.content, example.response)
    }
  }
  return document
}

function exemplify(content: Record<string, Media> | undefined, example: unknown): void {
  for (const media of Object.values(content ?? {})) media.example = example
}

/** A schema of the document, as far as naming reads it. */
interface Schema {
  title?: string
  description?: string
  nullable?: boolean
  $ref?: string
  type?: string
  properties?: Record<string, Schema>
  patternProperties?: Record<string, Schema>
  additionalProperties?: Schema | boolean
  items?: Schema
  allOf?: Schema[]
  anyOf?: Schema[]
  oneOf?: Schema[]
  not?: Schema
  [keyword: string]: unknown
}

const COMPONENTS = '#/components/schemas/'
const REQUEST_BODIES = '#/components/requestBodies/'

/**
 * The document with every schema that has a `title` written once, as `components.schemas[title]`, and a
 * `$ref` to it wherever it appears, so that generated clients get named types; a request body's own schema
 * as `components.requestBodies[title]` instead, where generators read a field with a default as one a
 * caller may leave out (openapi-typescript makes it required in `components.schemas`). A `title` is an annotation
 * that neither the validator nor the serializer reads: naming a schema changes no request's or answer's
 * handling. Its nullable use (`Nullable`) is `anyOf` it and null, a use with a description of its own `allOf`
 * it; two different shapes under one title are a mistake, refused when the document is built.
 */
function withNamedSchemas<
  T extends { paths?: object; components?: { schemas?: Record<string, unknown>; requestBodies?: object } },
>(document: T): T {
  const components: Record<string, Schema> = { ...(document.components?.schemas as Record<string, Schema>) }
  const requestBodies: Record<string, RequestBody> = { ...document.components?.requestBodies }
  document.components = { ...document.components, schemas: components, requestBodies }
  const named = (schema: Schema): Schema => {
    const inner = withNamedParts(schema, named)
    const { title, nullable, description, ...shape } = inner
    if (typeof title !== 'string') return inner
    const component = { title, ...(description !== undefined && { description }), ...shape }
    const known = components[title]
    if (!known) components[title] = component
    else if (!sameShape(known, component)) {
      throw new Error(
        `Two different schemas are named ${title} (a title names one shape: give the other its own)`,
      )
    }
    const ref = { $ref: `${COMPONENTS}${title}` }
    const ownDescription = description !== undefined && description !== components[title]?.description
    if (!nullable && !ownDescription) return ref
    const about = ownDescription ? { description } : {}
    if (!nullable) return { allOf: [ref], ...about }
    // It or null. Not `allOf` beside `nullable`: null fails the referred schema's `type` under `allOf`, and
    // OpenAPI 3.0 reads `nullable` only beside a `type`; null alone is written as 3.0.3 says (`enum: [null]`).
    return { anyOf: [ref, { type: component.type ?? 'object', nullable: true, enum: [null] }], ...about }
  }
  for (const [name, schema] of Object.entries(components)) components[name] = withNamedParts(schema, named)
  for (const item of Object.values(document.paths ?? {}) as Record<string, Record<string, unknown>>[]) {
    for (const operation of Object.values(item) as DocumentedOperation[]) {
      if (operation.requestBody && 'content' in operation.requestBody) {
        operation.requestBody = namedBody(operation.requestBody, named, requestBodies)
      }
      for (const answer of Object.values(operation.responses ?? {})) {
        for (const media of Object.values(answer.content ?? {}))
          if (media.schema) media.schema = named(media.schema)
      }
    }
  }
  if (Object.keys(requestBodies).length === 0) delete document.components.requestBodies
  return document
}

/** A request body: a `$ref` to `requestBodies[title]` when its schema has a title, its parts named. */
function namedBody(
  body: RequestBody,
  named: (schema: Schema) => Schema,
  requestBodies: Record<string, RequestBody>,
): RequestBody | { $ref: string } {
  const title = Object.values(body.content ?? {})[0]?.schema?.title
  // Untitled, the body's schema is named as any other; titled, only its parts are, the body itself below.
  const name = typeof title === 'string' ? (schema: Schema) => withNamedParts(schema, named) : named
  const content: Record<string, Media> = {}
  for (const [type, media] of Object.entries(body.content ?? {})) {
    content[type] = media.schema ? { ...media, schema: name(media.schema) } : media
  }
  if (typeof title !== 'string') return { ...body, content }
  const known = requestBodies[title]
  const schemas = (of: RequestBody) =>
    JSON.stringify(Object.values(of.content ?? {}).map((media) => media.schema))
  if (!known) requestBodies[title] = { ...body, content }
  else if (schemas(known) !== schemas({ content })) {
    throw new Error(
      `Two different request bodies are named ${title} (a title names one shape: give the other its own)`,
    )
  }
  return { $ref: `${REQUEST_BODIES}${title}` }
}

/** The schema with its subschemas passed through `named` (data keywords, such as `example`, left alone). */
function withNamedParts(schema: Schema, named: (schema: Schema) => Schema): Schema {
  if (typeof schema !== 'object' || schema === null) return schema
  const copy: Schema = { ...schema }
  for (const key of ['properties', 'patternProperties'] as const) {
    const properties = schema[key]
    if (properties) copy[key] = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, named(v)]))
  }
  for (const key of ['allOf', 'anyOf', 'oneOf'] as const) copy[key] &&= schema[key]?.map(named)
  for (const key of ['items', 'not'] as const) if (schema[key]) copy[key] = named(schema[key])
  if (typeof schema.additionalProperties === 'object')
    copy.additionalProperties = named(schema.additionalProperties)
  return copy
}

/** Whether two named schemas are one shape: their descriptions aside. */
function sameShape(a: Schema, b: Schema): boolean {
  const { description: _a, ...left } = a
  const { description: _b, ...right } = b
  return JSON.stringify(left) === JSON.stringify(right)
}
