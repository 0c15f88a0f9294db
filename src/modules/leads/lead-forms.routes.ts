import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { LeadForm, LeadFormsParams, LeadFormsQuery, LeadFormsRefusal } from './lead-forms.schemas.js'
import { LeadFormsRefused, listPageLeadForms, refusalBody } from './lead-forms.service.js'

/** A page's lead forms, under `/socialnet/accounts/:pageid/leadforms` of both integration prefixes. */
export const leadFormsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticate)
  // Graph's refusal answers its provider error object beside the envelope; every other error goes on to the
  // service's error handler.
  app.setErrorHandler((error, _request, reply) => {
    if (!(error instanceof LeadFormsRefused)) throw error
    return reply.status(error.statusCode).send(refusalBody(error))
  })

  app.get(
    '/socialnet/accounts/:pageid/leadforms',
    routeOptions({
      operationId: 'leadFormsList',
      summary: "List a Meta page's lead forms (every page of Graph's listing)",
      description:
        "The lead forms of the Meta page `pageid`, every page of Graph's listing, read with " +
        '`pageaccesstoken` (used for the call, never kept): `{ id, name, status, locale, questions, ' +
        "privacy_policy, created_time, page_id }`. `account_id` names a sub-account of the caller's (404 " +
        "`Account not found` otherwise). When Graph refuses the token, 400 with Graph's message and its " +
        "provider error object (`type` 'OAuthException', `code` 190); 502 when Graph cannot be reached.",
      tags: ['leads'],
      access: 'bearer',
      params: LeadFormsParams,
      querystring: LeadFormsQuery,
      response: { 200: Envelope(Type.Array(LeadForm)), 400: LeadFormsRefusal },
      errors: [401, 403, 404, 502],
      answers: {
        400:
          "Invalid request, or Graph refused the page token: Graph's message, its `type` and `code` beside " +
          'the envelope',
        404: "`Account not found`: not the caller's account nor a sub-account of it",
        502: 'Graph could not be reached',
      },
    }),
    async (request) => {
      const deps = { db: platform.db, log: request.log, graph: platform.config.leads }
      const forms = await listPageLeadForms(
        deps,
        request.auth.account_id,
        request.params.pageid,
        request.query,
      )
      return ok(forms)
    },
  )
}
