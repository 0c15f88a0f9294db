import type { FastifyContextConfig, FastifySchema } from 'fastify'
import { errorResponses } from './envelope.js'

/**
 * Who may call a route: `admin`, the admin API's token (ADMIN_TOKEN); `bearer`, a platform JWT;
 * `{ oauthScope }`, a platform JWT or a third-party app's access token granted that scope; `public`,
 * anyone. The route's plugin enforces it (`app.authenticate`, `app.authenticateAdmin`); this names it in
 * the OpenAPI document, and gives `authenticate` the scope to check.
 */
export type RouteAccess = 'admin' | 'bearer' | 'public' | { oauthScope: string }

/** A route's schema with its OpenAPI description, who may call it, and the error statuses it answers. */
export interface RouteSpec extends FastifySchema {
  /** `<feature><Action>`, unique across the API. */
  operationId: string
  summary: string
  tags: readonly string[]
  access: RouteAccess
  /** Each is documented with the shared error envelope. */
  errors: readonly number[]
  /** Route config besides the OAuth scope (a rate limit). */
  config?: FastifyContextConfig
}

function securityOf(access: RouteAccess): { [scheme: string]: string[] }[] {
  if (access === 'public') return []
  if (typeof access === 'string') return [{ [access]: [] }]
  return [{ bearer: [] }, { oauth2: [access.oauthScope] }]
}

/**
 * The options of a route, from its spec: the schema with `security` and the error responses added, and
 * the config with the OAuth scope. Spread it into the route's options beside its own hooks.
 */
export function routeOptions<const S extends RouteSpec>(
  spec: S,
): {
  config?: FastifyContextConfig
  schema: Omit<S, 'access' | 'errors' | 'config' | 'response'> & {
    response: S['response'] & ReturnType<typeof errorResponses<S['errors'][number]>>
  }
} {
  const { access, errors, config, response, ...schema } = spec
  const routeConfig = typeof access === 'object' ? { ...config, oauthScope: access.oauthScope } : config
  return {
    // No `config` key without one, so that spreading these options never drops another's config.
    ...(routeConfig && { config: routeConfig }),
    schema: {
      ...schema,
      security: securityOf(access),
      response: { ...errorResponses(...errors), ...(response as object) },
    },
  }
}
