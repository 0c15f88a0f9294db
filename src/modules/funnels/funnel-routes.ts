import { bearerOrOAuth } from '../../platform/auth/plugin.js'

/** What third-party apps need on funnel routes: `sites.read` to read, `sites.write` to change. */
export const FUNNEL_SCOPES = {
  read: { oauthScope: 'sites.read' },
  write: { oauthScope: 'sites.write' },
} as const

/** The OpenAPI description of a funnel route open to platform JWTs and apps' tokens with `scope`. */
export const funnelOperation = (operationId: string, summary: string, scope: { oauthScope: string }) => ({
  operationId,
  tags: ['funnels'],
  summary,
  security: bearerOrOAuth(scope.oauthScope),
})
