import cors from '@fastify/cors'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { createAccessTokenReader, createAccessTokenVerifier } from '../../platform/auth/access-tokens.js'
import type { ModuleOptions } from '../../platform/context.js'
import { DomainError } from '../../platform/http/errors.js'
import { createFailureLimit } from '../../platform/http/limits.js'
import { routeOptions } from '../../platform/http/route-options.js'
import type { AppRow } from './apps.repository.js'
import { authenticateClient, CLIENT_AUTH_FAILURES } from './client-auth.service.js'
import {
  Introspection,
  type OAuthForm,
  oauthErrorResponses,
  TOKEN_REQUEST_EXAMPLE,
  TOKEN_RESPONSE_EXAMPLE,
  TokenRequestBody,
  TokenResponse,
  TokenStatusRequestBody,
} from './token.schemas.js'
import { exchangeForTokens, OAuthError, parentAccounts, type TokenDeps } from './token.service.js'
import { introspectToken, revokeToken } from './token-status.service.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The client the token request authenticated as (set before the rate limit counts it). */
    oauthClient: AppRow | null
  }
}

const body = (request: FastifyRequest) =>
  (typeof request.body === 'object' && request.body !== null ? request.body : {}) as OAuthForm

/**
 * `POST /token` (RFC 6749 3.2): client authentication, then the code or refresh grant. Answers and errors
 * are RFC 6749 JSON with `Cache-Control: no-store`; the one endpoint open to other origins.
 */
export const tokenRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const deps: TokenDeps = {
    db: platform.db,
    issuer: platform.config.publicBaseUrl,
    secretsKey: platform.config.secretsKey,
    keys: platform.oauthKeys,
    refreshGraceSeconds: platform.config.oauth.refreshGraceSeconds,
    parentAccountOf: parentAccounts(),
    revokedGrants: platform.revokedGrants,
    clientAuthFailures: createFailureLimit(platform.redis, 'oauth-client-auth', {
      failures: CLIENT_AUTH_FAILURES,
      seconds: 15 * 60,
    }),
  }
  const withIp = (request: FastifyRequest): TokenDeps => ({ ...deps, ip: request.ip })
  const verifyAccessToken = createAccessTokenVerifier(
    platform.oauthKeys,
    platform.config.publicBaseUrl,
    platform.revokedGrants,
    platform.accountAccess,
  )
  const readAccessToken = createAccessTokenReader(
    platform.oauthKeys,
    platform.config.publicBaseUrl,
    platform.revokedGrants,
  )
  const statusDeps = (request: FastifyRequest) => ({ ...withIp(request), verifyAccessToken, readAccessToken })
  await app.register(formbody)
  // Browser apps call /token from their own origin; revocation and introspection stay same-origin.
  await app.register(cors, {
    delegator: (request, callback) => {
      const isToken = request.url.split('?')[0] === '/v1/auth/oauth/token'
      callback(null, {
        origin: isToken ? '*' : false,
        methods: ['POST'],
        allowedHeaders: ['authorization', 'content-type'],
      })
    },
  })
  app.decorateRequest('oauthClient', null)

  app.setErrorHandler((error, request, reply) => {
    reply.header('cache-control', 'no-store')
    if (error instanceof OAuthError) {
      // RFC 6749 5.2: a failed Basic authentication names the scheme to use.
      if (error.status === 401) reply.header('www-authenticate', 'Basic realm="oauth", charset="UTF-8"')
      if (error.retryAfterSeconds) reply.header('retry-after', String(error.retryAfterSeconds))
      return reply.status(error.status).send({ error: error.error, error_description: error.description })
    }
    if (error instanceof DomainError && error.statusCode === 429) {
      return reply.status(429).send({ error: 'too_many_requests', error_description: error.message })
    }
    // Fastify's own 4xx (a body that is not valid JSON, too large, an unknown content type), and the
    // platform's refusal of plain HTTP in production (400 `HTTPS is required`).
    const { statusCode, message } = error as { statusCode?: number; message?: string }
    if (statusCode && statusCode >= 400 && statusCode < 500) {
      return reply.status(400).send({ error: 'invalid_request', error_description: message ?? 'Bad request' })
    }
    request.log.error({ err: error }, 'token request failed')
    return reply.status(500).send({ error: 'server_error', error_description: 'Internal Server Error' })
  })

  // The body schemas document the forms without refusing them (`attachValidation`): the services read each
  // parameter themselves, to answer RFC 6749 errors rather than the API's error envelope.
  const clientAuthentication = {
    attachValidation: true,
    preValidation: async (request: FastifyRequest) => {
      // RFC 6749 3.1, 3.2: parameters must not be included more than once.
      const repeated = Object.entries(body(request)).find(([, value]) => Array.isArray(value))
      if (repeated) throw new OAuthError(400, 'invalid_request', `${repeated[0]} must not be repeated`)
      request.oauthClient = await authenticateClient(withIp(request), {
        authorization: request.headers.authorization,
        body: body(request),
      })
    },
  }
  // The spec's limit on token requests: 100 per hour per client_id (RATE_LIMIT_OAUTH_TOKEN_PER_HOUR). It
  // counts after client authentication (a preHandler), so a caller can only spend its own client's quota.
  const tokenRequestsPerClient = {
    rateLimit: {
      max: platform.config.rateLimits.oauthTokenPerHour,
      timeWindow: '1 hour',
      keyGenerator: (request: FastifyRequest) => `oauth-client:${request.oauthClient?.id}`,
    },
  }

  app.post(
    '/token',
    {
      ...clientAuthentication,
      ...routeOptions({
        operationId: 'tokenCreate',
        summary: 'Exchange an authorization code, or a refresh token, for tokens (RFC 6749)',
        description:
          'The token endpoint (RFC 6749). `grant_type=authorization_code` with `code`, `redirect_uri` (as sent ' +
          'to /authorize) and `code_verifier` (PKCE) gives an access token (an ES256 JWT, 1 hour), a refresh ' +
          'token (90 days) and the scopes; `grant_type=refresh_token` with `refresh_token` gives a new pair, ' +
          'the old refresh token replaced (reusing it revokes the grant). The client authenticates with HTTP ' +
          'Basic or `client_id`/`client_secret` in the body (a public app with `client_id` and PKCE). Form or ' +
          'JSON; cross-origin allowed; 100 requests an hour per client (RATE_LIMIT_OAUTH_TOKEN_PER_HOUR). ' +
          "Errors are RFC 6749's `{ error, error_description }`.",
        answers: {
          200: 'The tokens',
          400: '`invalid_request`, `invalid_grant` (code unknown, expired or used; redirect_uri differs; refresh token revoked) or `unsupported_grant_type`',
          401: "`invalid_client`: the client's authentication failed",
          429: "More than the client's token requests an hour: retry after `Retry-After`",
        },
        example: { body: TOKEN_REQUEST_EXAMPLE, response: TOKEN_RESPONSE_EXAMPLE },
        tags: ['oauth'],
        access: 'public',
        requiresHttps: true,
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenRequestBody,
        // 503: OAUTH_SIGNING_KEY is not set.
        response: { 200: TokenResponse, ...oauthErrorResponses(400, 401, 429, 503) },
        // The RFC 6749 error bodies are in `response`, not the API's error envelope.
        errors: [],
        config: tokenRequestsPerClient,
      }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache')
      return exchangeForTokens(withIp(request), request.oauthClient as AppRow, body(request))
    },
  )

  app.post(
    '/introspect',
    {
      ...clientAuthentication,
      ...routeOptions({
        operationId: 'tokenIntrospect',
        summary: "Whether one of the calling client's tokens is active, and what it grants (RFC 7662)",
        description:
          'Whether a token of the calling client is active (RFC 7662), and if so its scopes, account, user, ' +
          'client and expiry; a token of another client, or an unknown one, is `{ active: false }`. The client ' +
          'authenticates as on the token endpoint.',
        answers: { 200: "The token's state", 401: "`invalid_client`: the client's authentication failed" },
        tags: ['oauth'],
        access: 'public',
        requiresHttps: true,
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenStatusRequestBody,
        response: { 200: Introspection, ...oauthErrorResponses(400, 401, 429) },
        // The RFC 6749 error bodies are in `response`, not the API's error envelope.
        errors: [],
        config: tokenRequestsPerClient,
      }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      return introspectToken(statusDeps(request), request.oauthClient as AppRow, body(request))
    },
  )

  app.post(
    '/revoke',
    {
      ...clientAuthentication,
      ...routeOptions({
        operationId: 'tokenRevoke',
        summary:
          'Revoke a refresh or access token with its whole grant (RFC 7009); 200 also for unknown tokens',
        description:
          'Revokes a refresh or access token of the calling client (RFC 7009) together with its whole grant: ' +
          'its refresh tokens stop at once, its access tokens within seconds. An unknown token also answers ' +
          '200, as the RFC asks. The client authenticates as on the token endpoint.',
        answers: { 401: "`invalid_client`: the client's authentication failed" },
        tags: ['oauth'],
        access: 'public',
        requiresHttps: true,
        consumes: ['application/x-www-form-urlencoded', 'application/json'],
        body: TokenStatusRequestBody,
        response: {
          200: Type.Unsafe<undefined>({ type: 'null', description: 'Revoked, or unknown: no body' }),
          ...oauthErrorResponses(400, 401, 429),
        },
        // The RFC 6749 error bodies are in `response`, not the API's error envelope.
        errors: [],
        config: tokenRequestsPerClient,
      }),
    },
    async (request, reply) => {
      reply.header('cache-control', 'no-store')
      await revokeToken(statusDeps(request), request.oauthClient as AppRow, body(request))
      return reply.status(200).send()
    },
  )
}
