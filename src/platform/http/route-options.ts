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
  summary: string
  tags: readonly string[]
  access: RouteAccess
  /** Each is documented with the route's error envelope. */
  errors: readonly number[]
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
  schema: Omit<S, 'access' | 'errors' | 'errorEnvelope' | 'config' | 'response' | 'requiresHttps'> & {
    response: S['response'] & Record<S['errors'][number], TUnsafe<ErrorEnvelopeOf<S['errorEnvelope']>>>
  }
} {
  const { access, errors: given, errorEnvelope, config, response, requiresHttps, ...schema } = spec
  // A route that authenticates an account may answer 429 past the account's request budget (account-budget.ts).
  const errors = authenticatesAnAccount(access) && !given.includes(429) ? [...given, 429] : given
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
      security: securityOf(access),
      // A route answering in its own form (RFC 6749 JSON, a page) documents its 400 in `response`.
      response: {
        ...errorResponses(requiresHttps ? [...errors, 400] : errors, errorEnvelope as S['errorEnvelope']),
        ...(response as object),
      },
    },
  }
}
