import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { DomainError } from '../../platform/http/errors.js'
import { HttpsRequired } from '../../platform/http/https-required.js'
import { createFailureLimit } from '../../platform/http/limits.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { sendsDocument } from '../../platform/http/response-headers.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { getUser } from '../accounts/accounts.service.js'
import { accountsPage, consentPage, errorPage, type PageFrame, signInPage } from './authorize.pages.js'
import {
  type AuthorizeDeps,
  allow,
  appOfFlow,
  checkAuthorizationRequest,
  consentDetails,
  deny,
  redirectIfConsented,
  signIn,
} from './authorize.service.js'
import { localeOf, pageText } from './authorize.texts.js'
import { CSRF_COOKIE, type Flow, FlowExpired, newCsrfValue, readFlow, signFlow } from './flow.service.js'

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
  const deps: AuthorizeDeps = { db, issuer: config.publicBaseUrl }
  await app.register(cookie)
  await app.register(formbody)
  const secureCookie = config.publicBaseUrl.startsWith('https:')
  // Against guessing one user's password from many addresses: 10 misses in 15 minutes block the email.
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
    const locale = localeOf((request.query as { user_locale?: unknown } | undefined)?.user_locale)
    if (error instanceof HttpsRequired) {
      return html(reply, 400, errorPage(locale, 'invalid_request', pageText(locale, 'httpsRequired')))
    }
    if (!(error instanceof DomainError && error.statusCode === 429)) throw error
    return html(reply, 429, errorPage(locale, 'too_many_requests', pageText(locale, 'tooMany')))
  })

  async function pageFrame(request: FastifyRequest, flow: Flow, clientName: string): Promise<PageFrame> {
    return {
      locale: flow.locale,
      clientName,
      token: await signFlow(config.secretsKey, flow),
      pagePath: request.url.split('?')[0] as string,
    }
  }

  /** The posted flow and its app, or the page that says the request cannot go on. */
  async function postedFlow(request: FastifyRequest, reply: FastifyReply) {
    const form = (request.body ?? {}) as Form
    try {
      const flow = await readFlow(config.secretsKey, form.token, request.cookies[CSRF_COOKIE])
      const client = await appOfFlow(db, flow)
      if (client) return { flow, client, form }
      html(reply, 400, errorPage(flow.locale, 'unauthorized_client', 'Invalid Client ID'))
    } catch (error) {
      if (!(error instanceof FlowExpired)) throw error
      request.log.warn({ reason: error.reason }, 'oauth page refused as expired')
      html(reply, 400, errorPage('en', 'invalid_request', pageText('en', 'expired')))
    }
    return undefined
  }

  /** The consent page, unless the user allowed these scopes to the app in this account before. */
  async function askConsent(
    request: FastifyRequest,
    reply: FastifyReply,
    flow: Flow & { uid: string; account_id: string },
    clientName: string,
  ) {
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
      errors: [503],
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
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        200: Page('The account choice, or the consent page'),
        303: { type: 'null', description: 'To the app with a code: consent was given before' },
        ...pageErrors,
        401: Page('The sign-in page again: wrong email or password'),
        403: Page('The user belongs to no account'),
      },
      errors: [503],
      config: limited,
    }),
    async (request, reply) => {
      const posted = await postedFlow(request, reply)
      if (!posted) return reply
      const { flow, client, form } = posted
      const email = typeof form.email === 'string' ? form.email.trim() : ''
      const refuse = async (status: number, reason: 'wrongCredentials' | 'tooMany') => {
        request.log.info({ client_id: client.id, reason }, 'oauth sign-in refused')
        const frame = await pageFrame(request, flow, client.name)
        return html(reply, status, signInPage(frame, { error: pageText(flow.locale, reason), email }))
      }
      const emailKey = email.toLowerCase()
      if (await signInFailures.blocked(emailKey)) return refuse(429, 'tooMany')
      const user = await signIn(db, email, form.password)
      if (!user) {
        await signInFailures.failed(emailKey)
        return refuse(401, 'wrongCredentials')
      }
      await signInFailures.succeeded(emailKey)
      const [only, ...others] = user.accounts
      if (!only)
        return html(reply, 403, errorPage(flow.locale, 'access_denied', pageText(flow.locale, 'noAccounts')))
      if (others.length > 0) {
        return html(
          reply,
          200,
          accountsPage(await pageFrame(request, { ...flow, uid: user._id }, client.name), user.accounts),
        )
      }
      return askConsent(request, reply, { ...flow, uid: user._id, account_id: only._id }, client.name)
    },
  )

  app.post(
    '/authorize/account',
    routeOptions({
      operationId: 'authorizeChooseAccount',
      summary: 'The account chosen by a user of several (account_id, token)',
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        200: Page('The consent page'),
        303: { type: 'null', description: 'To the app with a code: consent was given before' },
        400: pageErrors[400],
      },
      errors: [503],
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
      tags: ['oauth'],
      access: 'public',
      requiresHttps: true,
      response: {
        303: { type: 'null', description: 'To the app: with a code, or with access_denied' },
        400: pageErrors[400],
      },
      errors: [503],
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
