import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import type { Redis } from 'ioredis'
import { isSameSecret } from '../crypto/constant-time.js'
import type { AccountBudget } from '../http/account-budget.js'
import { Forbidden, TooManyRequests, Unauthorized } from '../http/errors.js'
import { createFailureLimit, sourceOf } from '../http/limits.js'
import { isAccessToken } from './access-tokens.js'
import type { AccountAccess, Admission } from './account-access.js'
import type { AuthContext, PlatformTokens } from './platform-jwt.js'

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext
  }
  interface FastifyContextConfig {
    /** The scope an OAuth access token needs on this route; without one, such tokens are refused. */
    oauthScope?: string
  }
  interface FastifyInstance {
    /**
     * onRequest hook: verifies the bearer token (a platform JWT, or an OAuth access token carrying the
     * route's `oauthScope`) and sets `request.auth`.
     */
    authenticate: onRequestHookHandler
    /** preHandler hook: refuses accounts whose status is not `active` (after `authenticate`). */
    requireActiveAccount: (request: FastifyRequest) => Promise<void>
    /** onRequest hook: admin API bearer token. */
    authenticateAdmin: (request: FastifyRequest) => Promise<void>
    /**
     * Whether `token` is the admin token, a wrong one counted against the caller's address; throws 429
     * (TooManyRequests) while the address is blocked (see ADMIN_AUTH_FAILURES).
     */
    isAdminToken: (request: FastifyRequest, token: string) => Promise<boolean>
  }
}

export interface AuthOptions {
  tokens: PlatformTokens
  /** Verifies OAuth access tokens (see access-tokens.ts), the account's access included. */
  verifyAccessToken: (token: string) => Promise<AuthContext>
  /** Counts an app's call in the account against its hourly allowance; throws past it. */
  limitOAuthApp: (auth: AuthContext) => Promise<void>
  adminToken: string
  /** Where failed admin credentials are counted, so that every instance counts them together. */
  redis: Redis | undefined
  /** The account's status, or null when there is no such account. */
  accountStatus: (accountId: string) => Promise<string | null>
  /**
   * Refuses platform JWTs of suspended accounts and of users no longer members, whatever their lifetime;
   * and gives the account's own request budget.
   */
  accountAccess: Pick<AccountAccess, 'admission'>
  /** Counts every request authenticated as an account against the account's budget. */
  budget: AccountBudget
}

const BEARER = 'bearer '

/** Wrong admin credentials (bearer or outbox sign-in) an address may send in 15 minutes. */
export const ADMIN_AUTH_FAILURES = 20
const ADMIN_AUTH_WINDOW_SECONDS = 15 * 60

export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization
  if (!header) throw new Unauthorized('missing Authorization header')
  const token = header.slice(BEARER.length)
  if (header.slice(0, BEARER.length).toLowerCase() !== BEARER || !token || token.includes(' '))
    throw new Unauthorized('Authorization must be "Bearer <token>"')
  return token
}

export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest('auth', null as unknown as AuthContext)

  async function authenticateApp(request: FastifyRequest, reply: FastifyReply, token: string) {
    const auth = await options.verifyAccessToken(token)
    const scope = request.routeOptions.config.oauthScope
    if (!scope || !auth.oauth?.scopes.includes(scope)) {
      // RFC 6750 3.1: the scope the token lacks, for the app to ask the user for.
      reply.header(
        'www-authenticate',
        `Bearer error="insufficient_scope"${scope ? `, scope="${scope}"` : ''}`,
      )
      throw new Forbidden('insufficient_scope', { error: 'insufficient_scope', ...(scope && { scope }) })
    }
    await options.limitOAuthApp(auth)
    return auth
  }

  /**
   * Lets the caller in unless their account is closed to them or its request budget is spent; without a
   * promise when both are known here (most calls).
   */
  function admit(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: AuthContext,
    done: (error?: Error) => void,
  ) {
    const admission = options.accountAccess.admission(auth)
    if (admission instanceof Promise) {
      admission.then((found) => admitted(request, reply, auth, found, done), done)
      return
    }
    admitted(request, reply, auth, admission, done)
  }

  function admitted(
    request: FastifyRequest,
    reply: FastifyReply,
    auth: AuthContext,
    { refusal, requestBudget }: Admission,
    done: (error?: Error) => void,
  ) {
    if (refusal) return done(refusal)
    request.auth = auth
    options.budget.charge(reply, auth.account_id, requestBudget, done)
  }

  // A callback hook, so that a platform JWT verified before (most calls) costs no promise.
  app.decorate(
    'authenticate',
    (request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
      let token: string
      try {
        token = bearerToken(request)
      } catch (error) {
        return done(error as Error)
      }
      if (isAccessToken(token)) {
        // The verifier has refused a closed account already: admission is known here by then.
        authenticateApp(request, reply, token).then((auth) => admit(request, reply, auth, done), done)
        return
      }
      const known = options.tokens.remembered(token)
      if (known) return admit(request, reply, known, done)
      options.tokens.verify(token).then((auth) => admit(request, reply, auth, done), done)
    },
  )

  app.decorate('requireActiveAccount', async (request: FastifyRequest) => {
    const status = await options.accountStatus(request.auth.account_id)
    if (status === null) throw new Forbidden('Account not found')
    if (status !== 'active') throw new Forbidden(`Account is ${status}`)
  })

  const adminFailures = createFailureLimit(options.redis, 'admin-auth', {
    failures: ADMIN_AUTH_FAILURES,
    seconds: ADMIN_AUTH_WINDOW_SECONDS,
  })

  /**
   * Wrong tokens are counted per address (an IPv6 /64), on every instance together. A blocked address is
   * refused whatever it sends, the right token too: were the right one let through, a guesser would still be
   * told the right guess (200, not 429), and the limit would stop nothing. Other addresses are not affected.
   */
  async function isAdminToken(request: FastifyRequest, token: string): Promise<boolean> {
    const source = sourceOf(request.ip)
    const secondsBlocked = await adminFailures.secondsBlocked(source)
    if (secondsBlocked > 0) throw new TooManyRequests(secondsBlocked)
    if (isSameSecret(token, options.adminToken)) return true
    await adminFailures.failed(source)
    return false
  }
  app.decorate('isAdminToken', isAdminToken)

  app.decorate('authenticateAdmin', async (request: FastifyRequest) => {
    if (!(await isAdminToken(request, bearerToken(request)))) throw new Unauthorized('invalid admin token')
  })
}
