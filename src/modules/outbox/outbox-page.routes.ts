import cookie from '@fastify/cookie'
import formbody from '@fastify/formbody'
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { DomainError, TooManyRequests, Unauthorized } from '../../platform/http/errors.js'
import { sendsDocument } from '../../platform/http/response-headers.js'
import { type RouteSpec, routeOptions } from '../../platform/http/route-options.js'
import { validationMessage } from '../../platform/http/validation-message.js'
import { accountNames } from '../accounts/accounts.service.js'
import { readAttachment } from '../email/communications.service.js'
import { getSentMail, getSentMailHtml, listSentMail } from '../email/sent-mail.service.js'
import { getSentSms, listSentSms } from '../reviews/sms-outbox.service.js'
import {
  errorPage,
  mailListPage,
  mailPage,
  type PageFrame,
  signInPage,
  smsListPage,
  smsPage,
} from './outbox-page.html.js'
import {
  OutboxAttachmentParams,
  OutboxListQuery,
  OutboxMessageParams,
  Page,
  PageOrEnvelope,
  SignInForm,
} from './outbox-page.schemas.js'
import { endSession, isLiveSession, newSession, SESSION_SECONDS } from './outbox-page.service.js'

const SESSION_COOKIE = 'outbox_session'
/** The pages: their own styles, the message frame from this origin, forms back here, never framed. */
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
/**
 * A message's HTML: sandboxed (an opaque origin, no script, no form, no navigation of the page) even when
 * opened on its own; its images and styles load as the recipient's mail reader would load them.
 */
const MESSAGE_CSP =
  "sandbox; default-src 'none'; img-src https: http: data:; style-src 'unsafe-inline' https: http:; font-src https: http: data:; frame-ancestors 'self'"

const refusals = {
  400: PageOrEnvelope('A parameter is not valid, named by the message'),
  401: PageOrEnvelope('No admin token, a wrong one, or no live session: for a browser, the sign-in page'),
  429: PageOrEnvelope('Too many wrong admin tokens from this address: wait Retry-After seconds'),
}
const pageResponses = (description: string) => ({
  200: Page(description),
  ...refusals,
  404: PageOrEnvelope('No such message in the account'),
})

/** A browser navigating asks for text/html: it is answered with pages, errors included. */
const wantsPage = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html')

/** A signed-in page's options: the admin's (the token as a bearer, or the session cookie the sign-in sets). */
const adminPage = <const S extends Omit<RouteSpec, 'tags' | 'access' | 'errors'>>(spec: S) =>
  routeOptions<S & { tags: ['admin']; access: 'admin'; errors: []; description: string }>({
    ...spec,
    description:
      'Signed in with the admin token as a bearer, or with the session cookie of the sign-in form.',
    tags: ['admin'],
    access: 'admin',
    errors: [],
  })

/**
 * The operator's outbox under `/v1/admin/outbox`: the mail and review SMS of every account, as HTML pages,
 * behind the admin token or a session cookie made from it.
 */
export const outboxPageRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, storage, config } = platform
  const frame: PageFrame = { base: `${app.prefix}/outbox` }
  await app.register(cookie)
  await app.register(formbody)

  const sendPage = (reply: FastifyReply, status: number, body: string) =>
    reply
      .status(status)
      .header('content-security-policy', PAGE_CSP)
      .header('x-frame-options', 'DENY')
      .type('text/html; charset=utf-8')
      .send(body)

  app.addHook('onSend', async (_request, reply) => {
    sendsDocument(reply)
    reply.header('cache-control', 'no-store')
    reply.header('referrer-policy', 'no-referrer')
  })

  /** The page to come back to after signing in: an outbox page itself, never another path or site. */
  function nextOf(target: string | undefined): string | undefined {
    if (!target?.startsWith(frame.base) || !/^[!-~]*$/.test(target) || /\.\.|\/\//.test(target))
      return undefined
    const rest = target.slice(frame.base.length)
    return rest === '' || rest.startsWith('/') || rest.startsWith('?') ? target : undefined
  }

  // A browser's refusals are pages: 401 the sign-in form, 400 and 404 saying why. Other clients, and
  // errors of the service, go on to the service's error handler and its envelope.
  app.setErrorHandler((error: FastifyError | DomainError, request, reply) => {
    if (!wantsPage(request)) throw error
    if (error instanceof DomainError && error.statusCode === 401)
      return sendPage(
        reply,
        401,
        signInPage(frame, { next: request.method === 'GET' ? nextOf(request.url) : undefined }),
      )
    if (error instanceof TooManyRequests) {
      reply.header('retry-after', String(error.retryAfterSeconds))
      const wait = `Try again in ${error.retryAfterSeconds} seconds.`
      return sendPage(
        reply,
        429,
        errorPage(frame, 429, `Too many wrong admin tokens from this address. ${wait}`),
      )
    }
    if (error instanceof DomainError && error.statusCode < 500)
      return sendPage(reply, error.statusCode, errorPage(frame, error.statusCode, error.message))
    if (!(error instanceof DomainError) && error.validation) {
      const { message } = validationMessage(error.validation, error.validationContext)
      return sendPage(reply, 400, errorPage(frame, 400, message))
    }
    throw error
  })

  app.post(
    '/outbox/sign-in',
    routeOptions({
      operationId: 'outboxPageSignIn',
      summary:
        'Sign in to the outbox pages with the admin token (form: token, next); sets the session cookie',
      description:
        "The sign-in form of the operator's outbox pages (the email and review SMS the service sent, of every " +
        'account): the ADMIN_TOKEN typed once, then an HttpOnly session cookie for these pages only, so that ' +
        'the token is not kept in the browser. A wrong token shows the form again (401); wrong tokens are ' +
        'counted per address as on the admin API (429 past the limit).',
      tags: ['admin'],
      access: 'public',
      body: SignInForm,
      response: {
        303: { type: 'null', description: 'To the outbox page asked for, with the session cookie set' },
        ...refusals,
      },
      errors: [],
    }),
    async (request, reply) => {
      // The admin API's check, which counts wrong tokens per address and blocks it past a limit (429).
      if (!(await app.isAdminToken(request, request.body.token))) {
        request.log.warn('outbox sign-in refused')
        if (!wantsPage(request)) throw new Unauthorized('invalid admin token')
        const next = nextOf(request.body.next)
        return sendPage(reply, 401, signInPage(frame, { next, error: 'The admin token is not right.' }))
      }
      reply.setCookie(SESSION_COOKIE, await newSession(db, config.adminToken, new Date()), {
        path: frame.base,
        httpOnly: true,
        sameSite: 'strict',
        secure: request.protocol === 'https' || config.publicBaseUrl.startsWith('https:'),
        maxAge: SESSION_SECONDS,
      })
      return reply.redirect(nextOf(request.body.next) ?? frame.base, 303)
    },
  )

  app.post(
    '/outbox/sign-out',
    routeOptions({
      operationId: 'outboxPageSignOut',
      summary: 'End the outbox session of this browser: on the server at once, and its cookie',
      description:
        "Ends this browser's outbox session: on the server at once (the cookie no longer works, even if " +
        'kept), and clears the cookie.',
      tags: ['admin'],
      access: 'public',
      response: { 303: { type: 'null', description: 'To the sign-in page' }, 400: refusals[400] },
      errors: [],
    }),
    async (request, reply) => {
      await endSession(db, config.adminToken, request.cookies[SESSION_COOKIE])
      return reply.clearCookie(SESSION_COOKIE, { path: frame.base }).redirect(frame.base, 303)
    },
  )

  /**
   * The admin token as a bearer (checked when given), else a live session cookie: another scheme (a proxy's
   * Basic credentials, which the browser then sends everywhere) leaves the cookie in force.
   */
  async function signedIn(request: FastifyRequest) {
    if (/^bearer /i.test(request.headers.authorization ?? '')) return app.authenticateAdmin(request)
    if (!(await isLiveSession(db, config.adminToken, request.cookies[SESSION_COOKIE], new Date())))
      throw new Unauthorized('sign in with the admin token')
  }

  const signedInPages: FastifyPluginAsyncTypebox = async (pages) => {
    pages.addHook('onRequest', signedIn)

    pages.get(
      '/outbox',
      adminPage({
        operationId: 'outboxPageMailList',
        summary: 'The sent email of every account, newest first: to, subject, time, status, events',
        querystring: OutboxListQuery,
        response: pageResponses('The list of sent email'),
      }),
      async (request, reply) => {
        const { account_id: accountId, ...window } = request.query
        const { data, ...paging } = await listSentMail(db, { accountId, ...window })
        const names = await accountNames(db, [accountId, ...data.map((mail) => mail.accountId)])
        return sendPage(reply, 200, mailListPage({ ...frame, ...paging, path: '', accountId, names }, data))
      },
    )

    pages.get(
      '/outbox/sms',
      adminPage({
        operationId: 'outboxPageSmsList',
        summary: 'The review SMS of every account, newest first',
        querystring: OutboxListQuery,
        response: pageResponses('The list of sent SMS'),
      }),
      async (request, reply) => {
        const { account_id: accountId, ...window } = request.query
        const { data, ...paging } = await listSentSms(db, { accountId, ...window })
        const names = await accountNames(db, [accountId, ...data.map((sms) => sms.account_id)])
        return sendPage(
          reply,
          200,
          smsListPage({ ...frame, ...paging, path: '/sms', accountId, names }, data),
        )
      },
    )

    pages.get(
      '/outbox/accounts/:account_id/emails/:id',
      adminPage({
        operationId: 'outboxPageMailRead',
        summary:
          'One sent email: headers, delivery events, its HTML in a sandboxed frame, text part, attachments',
        params: OutboxMessageParams,
        response: pageResponses('The message'),
      }),
      async (request, reply) => {
        const { account_id: accountId, id } = request.params
        const mail = await getSentMail(db, accountId, id)
        const names = await accountNames(db, [accountId])
        return sendPage(reply, 200, mailPage(frame, mail, names.get(accountId)))
      },
    )

    pages.get(
      '/outbox/accounts/:account_id/emails/:id/html',
      adminPage({
        operationId: 'outboxPageMailHtml',
        summary: 'The HTML part of a sent email, served sandboxed (Content-Security-Policy: sandbox)',
        params: OutboxMessageParams,
        response: pageResponses("The message's own HTML, for the frame of its page"),
      }),
      async (request, reply) => {
        const { account_id: accountId, id } = request.params
        const body = await getSentMailHtml(db, accountId, id)
        // Framed by its page only; x-frame-options stays the service's SAMEORIGIN.
        return reply
          .header('content-security-policy', MESSAGE_CSP)
          .type('text/html; charset=utf-8')
          .send(body)
      },
    )

    pages.get(
      '/outbox/accounts/:account_id/emails/:id/attachments/:index',
      adminPage({
        operationId: 'outboxPageAttachmentDownload',
        summary: 'Download an attachment of a sent email',
        params: OutboxAttachmentParams,
        response: {
          ...pageResponses("The file bytes, with the attachment's type"),
          200: {
            description: "The file bytes, with the attachment's type",
            content: {
              'application/octet-stream': {
                schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary' }),
              },
            },
          },
        },
      }),
      async (request, reply) => {
        const { account_id: accountId, id, index } = request.params
        const { metadata, bytes } = await readAttachment(db, storage, accountId, id, index)
        // Always a download, and sandboxed should a browser render it anyway.
        return reply
          .type(metadata.type || 'application/octet-stream')
          .header('content-disposition', contentDisposition(metadata.file_name))
          .header('content-security-policy', "sandbox; default-src 'none'")
          .header('content-length', bytes.length)
          .send(bytes)
      },
    )

    pages.get(
      '/outbox/accounts/:account_id/sms/:id',
      adminPage({
        operationId: 'outboxPageSmsRead',
        summary: 'One review SMS: from, to, time, provider, its review request and its text',
        params: OutboxMessageParams,
        response: pageResponses('The SMS'),
      }),
      async (request, reply) => {
        const { account_id: accountId, id } = request.params
        const sms = await getSentSms(db, accountId, id)
        const names = await accountNames(db, [accountId])
        return sendPage(reply, 200, smsPage(frame, sms, names.get(accountId)))
      },
    )
  }
  await app.register(signedInPages)
}
