import type { FastifyDynamicSwaggerOptions } from '@fastify/swagger'

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
    'The lowercase hex HMAC-SHA256, with EDGE_SIGNING_SECRET, of the method, the path, `_ts` (Unix seconds, ' +
    '300 s either way) and the other fields sorted by key: `_sig` and `_ts` in the query string of a GET, ' +
    'in the JSON body of a POST.',
} as const

/** What every scheme that authenticates an account adds to its description (platform/http/account-budget.ts). */
const ACCOUNT_BUDGET =
  " Every request authenticated as an account counts against the account's request budget (ACCOUNT_REQUEST_BUDGET " +
  'a window, all its users and apps together): each answer carries `RateLimit-Policy` and `RateLimit` ' +
  '(draft-ietf-httpapi-ratelimit-headers), e.g. `RateLimit-Policy: "account";q=6000;w=60` and ' +
  '`RateLimit: "account";r=5999;t=42` (requests left, seconds until the window ends); past it 429 with Retry-After.'

/** The options of the OpenAPI document at `/docs/json`: its security schemes and component names. */
export function openApiOptions(scopes: Record<string, string>): FastifyDynamicSwaggerOptions {
  return {
    // Shared schemas keep their $id as their component name (ErrorEnvelope), not def-N.
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    openapi: {
      info: { title: 'Platform backend', version: '1.0.0' },
      // Relative: wherever the document is served from.
      servers: [{ url: '/', description: 'This service' }],
      components: {
        securitySchemes: {
          bearer: {
            type: 'http',
            scheme: 'bearer',
            bearerFormat: 'JWT',
            description: `A platform JWT of a user in an account.${ACCOUNT_BUDGET}`,
          },
          admin: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
          oauth2: {
            type: 'oauth2',
            description: `A third-party app's access token, for the scope the route names.${ACCOUNT_BUDGET}`,
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
        ? withDefaultsOptional(asOpenApi30(document.openapiObject))
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
