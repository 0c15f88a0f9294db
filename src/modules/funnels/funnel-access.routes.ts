import type { FastifySchema } from 'fastify'
import { bearerOrOAuth } from '../../platform/auth/plugin.js'

/** Third-party apps need `sites.read` to read funnels and `sites.write` to change them. */
const SCOPES = { read: 'sites.read', write: 'sites.write' } as const

/**
 * The options of an account-scoped funnel route (the plugin authenticates with `app.authenticate`): its
 * OAuth scope, and the OpenAPI description with the route's schema.
 */
export function funnelRoute<S extends FastifySchema>(
  operationId: string,
  summary: string,
  access: keyof typeof SCOPES,
  schema: S,
) {
  const oauthScope = SCOPES[access]
  return {
    config: { oauthScope },
    schema: { operationId, tags: ['funnels'], summary, security: bearerOrOAuth(oauthScope), ...schema },
  }
}
