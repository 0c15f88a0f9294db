import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { DomainError } from '../../platform/http/errors.js'
import { HttpsRequired } from '../../platform/http/https-required.js'
import { createFailureLimit, sourceOf } from '../../platform/http/limits.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { sendsDocument } from '../../platform/http/response-headers.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { getUser } from '../accounts/accounts.service.js'
import { accountsPage, consentPage, errorPage, type PageFrame, signInPage } from './authorize.pages.js'
import {
  AccountSuspended,
  type AuthorizeDeps,
  activeAccounts,
  allow,
  appOfFlow,
  checkAuthorizationRequest,
  consentDetails,
  deny,
  redirectIfConsented,
  refuseFlow,
  requireActiveAccount,
  signIn,
} from './authorize.service.js'
import { localeOf, pageText, waitText } from './authorize.texts.js'
import { CSRF_COOKIE, type Flow, FlowExpired, newCsrfValue, readFlow, signFlow } from './flow.service.js'
import { repeatedParams } from './request-params.js'

const FLOW_COOKIE_SECONDS = 15 * 60
const CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; frame-ancestors 'none'"

type Form = Record<string, unknown>

/** A server-rendered page, documented under its status. */
const Page = (description: string) => ({
  description,
  content: { 'text/html': { schema: Type.String() } },
})
const pageErrors = {
  400: Page(
    'The request cannot go on: the page says why (an unknown client, an expired page, plain HTTP in production, …)',
  ),
  429: Page('Too many requests from this address'),
}

/**
 * `GET|POST /authorize` and the pages after sign-in (`/authorize/account`, `/authorize/consent`): server-
 * rendered, CSRF-protected by a cookie the signed flow token must match, 303 after every POST, never framed.
 */
export const authorizeRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  const deps: AuthorizeDeps = { db, issuer: config.publicBaseUrl, requirePkce: config.oauth.requirePkce }
  await app.register(cookie)
  await app.register(formbody)
  const secureCookie = config.publicBaseUrl.startsWith('https:')
  // Against guessing one user's password: 10 misses in 15 minutes block that email from that source only
  // (an IPv4 address, an IPv6 /64), so that a flood from one source cannot lock the user out everywhere;
  // each IP is also held to RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE, whatever the emails it tries.
  const signInFailures = createFailureLimit(platform.redis, 'oauth-sign-in', {
    failures: 10,
    seconds: 15 * 60,
  })
  const limited = {
    rateLimit: { max: config.rateLimits.oauthAuthorizePerMinute, timeWindow: '1 minute', keyGenerator: byIp },
  }

  app.addHook('onSend', async (_request, reply) => {
    sendsDocument(reply)
    reply.header('content-security-policy', CSP)
    reply.header('x-frame-options', 'DENY')
    reply.header('cache-control', 'no-store')
    reply.header('referrer-policy', 'no-referrer')
  })

  const html = (reply: FastifyReply, status: number, body: string) =>
    reply.status(status).type('text/html; charset=utf-8').send(body)

  // The per-IP limit, and plain HTTP in production, answer a person with a page like the others, not the
  // API's JSON; the rest goes on to the service's error handler.
  app.setErrorHandler((error, request, reply) => {
    if (error instanceof AccountSuspended) {
      const text = pageText(error.locale, 'accountSuspended')
      return html(reply, 403, errorPage(error.locale, 'access_denied', text))
    }
    const locale = localeOf((request.query as { user_locale?: unknown } | undefined)?.user_locale)
    if (error instanceof HttpsRequired) {
      return html(reply, 400, errorPage(locale, 'invalid_request', pageText(locale, 'httpsRequired')))
    }
    if (!(error instanceof DomainError && error.statusCode === 429)) throw error
    const { retry_after } = error.additionalInfo as { retry_after: number }
    const text = pageText(locale, 'tooMany', { wait: waitText(locale, retry_after) })
    return html(reply, 429, errorPage(locale, 'too_many_requests', text))
  })

  async function pageFrame(request: FastifyRequest, flow: Flow, clientName: string): Promise<PageFrame> {
    return {
      locale: flow.locale,
      clientName,
      token: await signFlow(config.secretsKey, flow),
      pagePath: request.url.split('?')[0] as string,
    }
  }

  /**
   * The posted flow and its app, or the page that says the request cannot go on. A field posted twice is
   * refused as at GET /authorize (RFC 6749 3.1): on a page while the flow is unknown (its token twice),
   * then by a redirect to the flow's app.
   */
  async function postedFlow(request: FastifyRequest, reply: FastifyReply) {
    const form = (request.body ?? {}) as Form
    const repeated = repeatedParams(form)
    if (repeated.includes('token')) {
      html(reply, 400, errorPage('en', 'invalid_request', 'token must not be repeated'))
      return undefined
    }
    try {
      const flow = await readFlow(config.secretsKey, form.token, request.cookies[CSRF_COOKIE])
      const client = await appOfFlow(db, flow)
      if (!client) {
        html(reply, 400, errorPage(flow.locale, 'unauthorized_client', 'Invalid Client ID'))
        return undefined
      }
      if (repeated[0]) {
        const description = `${repeated[0]} must not be repeated`
        reply.redirect(refuseFlow(deps, flow, 'invalid_request', description), 303)
        return undefined
      }
      return { flow, client, form }
    } catch (error) {
      if (!(error instanceof FlowExpired)) throw error
      request.log.warn({ reason: error.reason }, 'oauth page refused as expired')
      html(reply, 400, errorPage('en', 'invalid_request', pageText('en', 'expired')))
    }
    return undefined
  }

  /**
   * The consent page, unless the user allowed these scopes to the app in this account before; a suspended
   * account gets neither (AccountSuspended: the error handler's page).
   */
  async function askConsent(
    request: FastifyRequest,
    reply: FastifyReply,
    flow: Flow & { uid: string; account_id: string },
    clientName: string,
  ) {
    await requireActiveAccount(db, flow)
    const consented = await redirectIfConsented(deps, flow)
    if (consented) return reply.redirect(consented, 303)
    const frame = await pageFrame(request, flow, clientName)
    return html(reply, 200, consentPage(frame, await consentDetails(db, flow)))
  }

  app.get(
    '/authorize',
    routeOptions({
      operationId: 'authorizeStart',
      summary: 'Start an authorization: the sign-in page',
      description:
        'Where an app sends a user to authorize it (RFC 6749 4.1.1): `response_type=code`, `client_id`, ' +
        '`redirect_uri` (an exact match of a registered one), `scope` (space-separated, reduced to what the ' +
        'app may ask), `state`, and for PKCE `code_challenge` with `code_challenge_method=S256`. Answers the ' +
        'sign-in page; the flow goes on through account choice and consent to a redirect with `code` and ' +
        '`state` (the code lives 10 minutes). An unknown client or redirect URI gets an error page; other ' +
        'errors redirect with `error` and `state`. 10 requests a minute per IP ' +
        '(RATE_LIMIT_OAUTH_AUTHORIZE_PER_MINUTE).',
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        200: Page('The sign-in page'),
        302: {
          type: 'null',
          description: "Back to the app's redirect URI with the spec's error and the state",
        },
        ...pageErrors,
      },
      // 503: SECRETS_ENCRYPTION_KEY is not set, so no sign-in page can be signed.
      errors: [],
      config: limited,
    }),
    async (request, reply) => {
      const outcome = await checkAuthorizationRequest(deps, request.query as Record<string, unknown>)
      if (outcome.kind === 'error-page') {
        return html(reply, 400, errorPage('en', outcome.error, outcome.description))
      }
      if (outcome.kind === 'redirect') return reply.redirect(outcome.location, 302)
      // One cookie per browser: a second tab's flow keeps the value, so both pages stay valid.
      const csrf = request.cookies[CSRF_COOKIE] || newCsrfValue()
      reply.setCookie(CSRF_COOKIE, csrf, {
        path: '/v1/auth/oauth',
        httpOnly: true,
        sameSite: 'strict',
        secure: secureCookie,
        maxAge: FLOW_COOKIE_SECONDS,
      })
      const frame = await pageFrame(request, { ...outcome.request, csrf }, outcome.clientName)
      return html(reply, 200, signInPage(frame))
    },
  )

  app.post(
    '/authorize',
    routeOptions({
      operationId: 'authorizeSignIn',
      summary: 'The sign-in form (email, password, token)',
      description:
        "The sign-in form of the authorization page (email, password, the page's signed `token`, the CSRF " +
        'cookie). A wrong email or password shows the page again with an error; a user of several accounts is ' +
        'shown the account choice, else the consent page, or is redirected at once when the grant already ' +
        'covers the scopes. 10 requests a minute per IP.',
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        200: Page('The account choice, or the consent page'),
        303: {
          type: 'null',
          description:
            'To the app: with a code (consent was given before), or invalid_request (a field posted twice)',
        },
        ...pageErrors,
        401: Page('The sign-in page again: wrong email or password'),
        403: Page('The user belongs to no account, or to no active one (suspended)'),
      },
      errors: [],
      config: limited,
    }),
    async (request, reply) => {
      const posted = await postedFlow(request, reply)
      if (!posted) return reply
      const { flow, client, form } = posted
      const email = typeof form.email === 'string' ? form.email.trim() : ''
      const refuse = async (status: number, reason: 'wrongCredentials' | 'tooMany', wait = '') => {
        request.log.info({ client_id: client.id, reason }, 'oauth sign-in refused')
        const frame = await pageFrame(request, flow, client.name)
        const error = pageText(flow.locale, reason, { wait })
        return html(reply, status, signInPage(frame, { error, email }))
      }
      const failureKey = `${email.toLowerCase()} ${sourceOf(request.ip)}`
      const blockedSeconds = await signInFailures.secondsBlocked(failureKey)
      if (blockedSeconds > 0) {
        reply.header('retry-after', blockedSeconds)
        return refuse(429, 'tooMany', waitText(flow.locale, blockedSeconds))
      }
      const user = await signIn(db, email, form.password)
      if (!user) {
        await signInFailures.failed(failureKey)
        return refuse(401, 'wrongCredentials')
      }
      await signInFailures.succeeded(failureKey)
      if (user.accounts.length === 0)
        return html(reply, 403, errorPage(flow.locale, 'access_denied', pageText(flow.locale, 'noAccounts')))
      // Only the accounts an app may be allowed into are offered; none at all is the suspended page.
      const [only, ...others] = await activeAccounts(db, user.accounts)
      if (!only) throw new AccountSuspended(flow.locale)
      if (others.length > 0) {
        const frame = await pageFrame(request, { ...flow, uid: user._id }, client.name)
        return html(reply, 200, accountsPage(frame, [only, ...others]))
      }
      return askConsent(request, reply, { ...flow, uid: user._id, account_id: only._id }, client.name)
    },
  )

  app.post(
    '/authorize/account',
    routeOptions({
      operationId: 'authorizeChooseAccount',
      summary: 'The account chosen by a user of several (account_id, token)',
      description:
        'The account chosen on the account choice page, for a user of several accounts; the flow goes on to ' +
        "the consent page. The page's signed `token` carries the flow; 10 requests a minute per IP.",
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        200: Page('The consent page'),
        403: Page('The account chosen is suspended'),
        303: {
          type: 'null',
          description:
            'To the app: with a code (consent was given before), or invalid_request (a field posted twice)',
        },
        400: pageErrors[400],
      },
      errors: [],
    }),
    async (request, reply) => {
      const posted = await postedFlow(request, reply)
      if (!posted) return reply
      const { flow, client, form } = posted
      const memberOf = flow.uid ? (await getUser(db, flow.uid)).memberships.map((m) => m.account_id) : []
      if (!flow.uid || typeof form.account_id !== 'string' || !memberOf.includes(form.account_id)) {
        return html(reply, 400, errorPage(flow.locale, 'invalid_request', pageText(flow.locale, 'expired')))
      }
      return askConsent(request, reply, { ...flow, uid: flow.uid, account_id: form.account_id }, client.name)
    },
  )

  app.post(
    '/authorize/consent',
    routeOptions({
      operationId: 'authorizeDecide',
      summary: 'The decision on the consent page (decision: allow or deny, token)',
      description:
        "The user's decision on the consent page: `allow` redirects to the app's redirect URI with a `code` " +
        '(10 minutes) and the `state`; `deny` with `error=access_denied` and the `state`. 10 requests a ' +
        'minute per IP.',
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        303: {
          type: 'null',
          description:
            'To the app: with a code, with access_denied, or invalid_request (a field posted twice)',
        },
        400: pageErrors[400],
        403: Page('The account was suspended since the consent page'),
      },
      errors: [],
    }),
    async (request, reply) => {
      const posted = await postedFlow(request, reply)
      if (!posted) return reply
      const { flow, form } = posted
      const { uid, account_id } = flow
      if (!uid || !account_id) {
        return html(reply, 400, errorPage(flow.locale, 'invalid_request', pageText(flow.locale, 'expired')))
      }
      if (form.decision !== 'allow') return reply.redirect(deny(deps, flow), 303)
      return reply.redirect(await allow(deps, { ...flow, uid, account_id }, request.ip), 303)
    },
  )
}
