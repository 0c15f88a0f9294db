import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import type { ModuleOptions } from '../../platform/context.js'
import { heavy } from '../../platform/http/account-concurrency.js'
import { contentDisposition } from '../../platform/http/content-disposition.js'
import { Envelope, ListEnvelope, ok, okPage } from '../../platform/http/envelope.js'
import { byIp } from '../../platform/http/rate-limit.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { Streamed } from '../../platform/http/schemas.js'
import {
  DateRangeQuery,
  FormSubmission,
  FormsQuery,
  SUBMIT_EXAMPLE,
  SUBMITTED_EXAMPLE,
  SubmitBody,
  Submitted,
} from './forms.schemas.js'
import { exportForms, listForms, submitForm } from './forms.service.js'
import { FunnelParams } from './funnel-access.schemas.js'
import { SITES_READ } from './funnel-access.service.js'
import { stepCacheOf } from './step-cache.js'

/** Longest user agent kept (with a submission, a click): real ones are far shorter, a header may be 16 kB. */
const MAX_USER_AGENT = 1_000

export const userAgentOf = (request: FastifyRequest) =>
  request.headers['user-agent']?.slice(0, MAX_USER_AGENT) || undefined

/** Any page may post its form here from any origin: this route alone answers CORS, with no credentials. */
const openToAnyOrigin: onRequestHookHandler = (_request, reply, done) => {
  reply.header('access-control-allow-origin', '*')
  done()
}

/**
 * `POST /forms/submit`: what a published funnel page's form posts, public, limited per IP
 * (`RATE_LIMIT_FORMS_PER_MINUTE`), open to cross-origin posts (the page is on the funnel's own domain).
 */
export const formSubmitRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, changes, config } = platform
  const stepCache = stepCacheOf(platform)

  // The browser's preflight for a JSON post from another origin.
  app.options('/forms/submit', { schema: { hide: true }, onRequest: openToAnyOrigin }, (_request, reply) =>
    reply
      .status(204)
      .headers({
        'access-control-allow-methods': 'POST',
        'access-control-allow-headers': 'content-type',
        'access-control-max-age': '86400',
      })
      .send(),
  )

  app.post(
    '/forms/submit',
    {
      onRequest: openToAnyOrigin,
      ...routeOptions({
        operationId: 'formsSubmit',
        summary:
          "Submit a funnel page's form (public): kept with the IP and user agent; an email or phone creates or updates the account's contact",
        description:
          "What a published funnel page's form posts: `funnel_id`, `step_id` and the form's `fields` " +
          '(strings by name). Public and open to any origin (CORS, no credentials), limited per IP ' +
          '(RATE_LIMIT_FORMS_PER_MINUTE, 60 a minute by default). The submission is kept with the IP and ' +
          "user agent, and an email or phone among the fields creates or updates the account's contact; a " +
          'filled honeypot `_hp` is answered alike and stored nowhere. 404 `Funnel not found` or `Step not ' +
          "found` when the page's funnel or step is unknown.",
        tags: ['funnels'],
        access: 'public',
        body: SubmitBody,
        response: { 201: Envelope(Submitted) },
        example: { body: SUBMIT_EXAMPLE, response: ok(SUBMITTED_EXAMPLE) },
        errors: [400, 404, 429],
        answers: {
          201: 'Kept (a honeypot catch is answered alike)',
          404: '`Funnel not found` or `Step not found`',
          429: 'Too many submissions from this IP: retry after `Retry-After` seconds',
        },
        config: {
          rateLimit: {
            max: config.rateLimits.formSubmitPerMinute,
            timeWindow: '1 minute',
            keyGenerator: byIp,
          },
        },
      }),
    },
    async (request, reply) => {
      const submitted = await submitForm(db, changes, stepCache, request.body, {
        ipAddress: request.ip,
        userAgent: userAgentOf(request),
      })
      return reply.status(201).send(ok(submitted))
    },
  )
}

/** A funnel's form submissions for its account: the list and the CSV export. */
export const formsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/:id/forms',
    routeOptions({
      operationId: 'formsList',
      summary: "List a funnel's form submissions, newest first, with their step's name",
      description:
        "The funnel's form submissions, newest first, each with its step's name. Filters: `search` (text " +
        'in any field value), `start_date` and `end_date` (ISO 8601 date or date-time; 400 when start is ' +
        'after end); pages of `limit` (default 10, at most 100), by `page` or by `cursor`.',
      tags: ['funnels'],
      access: SITES_READ,
      params: FunnelParams,
      querystring: FormsQuery,
      response: { 200: ListEnvelope(FormSubmission) },
      errors: [400, 401, 403, 404, 429],
      config: heavy({ when: (request) => Boolean((request.query as { search?: string }).search) }),
    }),
    async (request) => {
      const { data, pagination } = await listForms(
        db,
        request.auth.account_id,
        request.params.id,
        request.query,
      )
      return okPage(data, pagination)
    },
  )

  app.get(
    '/:id/forms/export',
    routeOptions({
      operationId: 'formsExport',
      summary: "Download a funnel's form submissions as CSV (streamed)",
      description:
        "The funnel's submissions between `start_date` and `end_date` as a CSV download (`text/csv`, " +
        'named `Forms-<date>-<time>.csv`), newest first and streamed; its header row is Submission Date, ' +
        'Name, Email, Phone, Message, IP Address. A cell that could run as a formula in a spreadsheet is ' +
        'neutralised.',
      tags: ['funnels'],
      access: SITES_READ,
      params: FunnelParams,
      querystring: DateRangeQuery,
      response: {
        200: {
          description: 'CSV: Submission Date, Name, Email, Phone, Message, IP Address',
          content: { 'text/csv': { schema: Streamed(Type.String()) } },
        },
      },
      errors: [400, 401, 403, 404, 429],
      config: heavy(),
    }),
    async (request, reply) => {
      const file = await exportForms(db, request.auth.account_id, request.params.id, request.query)
      return reply
        .header('content-disposition', contentDisposition(file.fileName))
        .type('text/csv; charset=utf-8')
        .send(file.body)
    },
  )
}
