import { type TOptional, type TString, type TUnsafe, Type } from '@sinclair/typebox'
import type { FastifyContextConfig, FastifySchema } from 'fastify'
import { type ErrorEnvelopeName, type ErrorEnvelopeOf, errorResponses } from './envelope.js'

/**
 * Who may call a route: `admin`, the admin API's token (ADMIN_TOKEN); `bearer`, a platform JWT;
 * `{ oauthScope }`, a platform JWT or a third-party app's access token granted that scope;
 * `edgeSignature`, the edge worker, by the HMAC of its fields; `public`, anyone (a webhook documents the
 * provider's signature header among its headers). The route's plugin enforces it (`app.authenticate`,
 * `app.authenticateAdmin`, a signature hook); this names it in the OpenAPI document (each name but
 * `public` is a security scheme there), and gives `authenticate` the scope to check.
 */
export type RouteAccess = 'admin' | 'bearer' | 'edgeSignature' | 'public' | { oauthScope: string }

/** A route's schema with its OpenAPI description, who may call it, and the error statuses it answers. */
export interface RouteSpec extends FastifySchema {
  /** `<feature><Action>`, unique across the API. */
  operationId: string
  /** A short phrase: what the operation does. */
  summary: string
  /**
   * One to four sentences in the spec's words: what the operation does, who may call it, the rules and
   * limits a caller meets. Optional to the compiler; test/openapi-reference.test.ts requires it.
   */
  description?: string
  tags: readonly string[]
  access: RouteAccess
  /**
   * The route's own error statuses (404, 409, ...), each documented with the route's error envelope.
   * Those every route of its kind answers are added (`derivedErrors`).
   */
  errors: readonly number[]
  /** The description of an answer, by status, where the default of its status (openapi.ts) says too little. */
  answers?: Readonly<Record<number, string>>
  /**
   * An example of the request body and of the success answer, shown beside their schemas
   * (test/openapi-reference.test.ts checks each against its schema).
   */
  example?: { body?: unknown; response?: unknown }
  /**
   * An authorization or webhook endpoint, which the spec says requires HTTPS in production: there a request
   * that did not come over HTTPS is refused with 400 `HTTPS is required` (https-required.ts). Documented as
   * `x-requires-https` on the operation, with the 400 among its errors.
   */
  requiresHttps?: true
  /** The envelope the route's errors answer in, when the spec gives it another than `success`. */
  errorEnvelope?: ErrorEnvelopeName
  /** Route config besides the OAuth scope (a rate limit). */
  config?: FastifyContextConfig
}

/**
 * The `headers` schema of a webhook: the headers its provider signs it with, by name, with what each holds.
 * Optional strings refuse nothing Node hands a route (a header sent twice arrives joined into one string):
 * the document names them, and the service, not the schema, judges the signature as before.
 */
export function signatureHeaders<const Name extends string>(descriptions: Record<Name, string>) {
  const headers = Object.entries<string>(descriptions).map(([name, description]) => [
    name,
    Type.Optional(Type.String({ description })),
  ])
  return Type.Object(Object.fromEntries(headers) as Record<Name, TOptional<TString>>)
}

const authenticatesAnAccount = (access: RouteAccess) => access === 'bearer' || typeof access === 'object'

/** The statuses `derivedErrors` may add, for the types of the route's replies. */
type DerivedError = 400 | 401 | 403 | 429 | 503

/**
 * The error answers a route gives by what it is: 400 when it validates a request (or refuses one not over
 * HTTPS), 401 when it needs credentials, 403 and 429 when it authenticates an account (a suspended account or
 * a scope not granted; the account's request budget), 429 under a rate limit of its own, and 503 on every
 * route (the database or Redis not answering in time, error-handler.ts).
 */
function derivedErrors(spec: RouteSpec): DerivedError[] {
  const validates = spec.querystring || spec.params || spec.body || spec.headers || spec.requiresHttps
  const account = authenticatesAnAccount(spec.access)
  return [
    ...(validates ? [400 as const] : []),
    ...(spec.access !== 'public' ? [401 as const] : []),
    ...(account ? [403 as const] : []),
    ...(account || spec.config?.rateLimit ? [429 as const] : []),
    503,
  ]
}

function securityOf(access: RouteAccess): { [scheme: string]: string[] }[] {
  if (access === 'public') return []
  if (typeof access === 'string') return [{ [access]: [] }]
  return [{ bearer: [] }, { oauth2: [access.oauthScope] }]
}

/**
 * The options of a route, from its spec: the schema with `security` and the error responses added, and
 * the config with the OAuth scope, whether HTTPS is required and the error envelope. Spread it into the
 * route's options beside its own hooks.
 */
export function routeOptions<const S extends RouteSpec>(
  spec: S,
): {
  config?: FastifyContextConfig
  schema: Omit<
    S,
    'access' | 'errors' | 'errorEnvelope' | 'config' | 'response' | 'requiresHttps' | 'answers' | 'example'
  > & {
    // A status the route answers in its own form (`response`) keeps its own type.
    response: S['response'] &
      Omit<
        Record<S['errors'][number] | DerivedError, TUnsafe<ErrorEnvelopeOf<S['errorEnvelope']>>>,
        keyof S['response']
      >
  }
} {
  const {
    access,
    errors: given,
    errorEnvelope,
    config,
    response,
    requiresHttps,
    answers,
    example,
    ...schema
  } = spec
  const errors = [...new Set([...derivedErrors(spec), ...given])].sort((a, b) => a - b)
  const routeConfig: FastifyContextConfig = {
    ...config,
    ...(typeof access === 'object' && { oauthScope: access.oauthScope }),
    ...(requiresHttps && { requiresHttps }),
    ...(errorEnvelope && { errorEnvelope }),
  }
  return {
    // No `config` key without one, so that spreading these options never drops another's config.
    ...(Object.keys(routeConfig).length > 0 && { config: routeConfig }),
    schema: {
      ...schema,
      ...(requiresHttps && { 'x-requires-https': true }),
      // Read by openapi.ts only (@fastify/swagger copies `x-` keys onto the operation), never by Fastify.
      ...(answers && { 'x-answers': answers }),
      ...(example && { 'x-example': example }),
      security: securityOf(access),
      // A route answering in its own form (RFC 6749 JSON, a page) documents its 400 in `response`.
      response: {
        ...errorResponses(errors, errorEnvelope as S['errorEnvelope']),
        ...(response as object),
      },
    },
  }
}
