import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Forbidden, Unauthorized } from '../http/errors.js'
import type { AuthContext, PlatformTokens } from './platform-jwt.js'

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext
  }
  interface FastifyInstance {
    /** onRequest hook: verifies the bearer JWT and sets `request.auth`. */
    authenticate: (request: FastifyRequest) => Promise<void>
    /** preHandler hook: refuses accounts whose status is not `active` (after `authenticate`). */
    requireActiveAccount: (request: FastifyRequest) => Promise<void>
    /** onRequest hook: admin API bearer token. */
    authenticateAdmin: (request: FastifyRequest) => Promise<void>
  }
}

export interface AuthOptions {
  tokens: PlatformTokens
  adminToken: string
  /** The account's status, or null when there is no such account. */
  accountStatus: (accountId: string) => Promise<string | null>
}

export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization
  if (!header) throw new Unauthorized('missing Authorization header')
  const [scheme, token] = header.split(' ')
  if (scheme?.toLowerCase() !== 'bearer' || !token)
    throw new Unauthorized('Authorization must be "Bearer <token>"')
  return token
}

const digest = (value: string) => createHash('sha256').update(value).digest()

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  const adminDigest = digest(options.adminToken)
  app.decorateRequest('auth', null as unknown as AuthContext)

  app.decorate('authenticate', async (request: FastifyRequest) => {
    request.auth = await options.tokens.verify(bearerToken(request))
  })

  app.decorate('requireActiveAccount', async (request: FastifyRequest) => {
    const status = await options.accountStatus(request.auth.account_id)
    if (status === null) throw new Forbidden('Account not found')
    if (status !== 'active') throw new Forbidden(`Account is ${status}`)
  })

  app.decorate('authenticateAdmin', async (request: FastifyRequest) => {
    if (!timingSafeEqual(digest(bearerToken(request)), adminDigest))
      throw new Unauthorized('invalid admin token')
  })
}
