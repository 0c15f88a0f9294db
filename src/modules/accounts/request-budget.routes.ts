import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { RequestBudget, RequestBudgetBody } from './request-budget.schemas.js'
import { getRequestBudget, setRequestBudget } from './request-budget.service.js'

/**
 * `/v1/admin/accounts/:id/request-budget`: how many requests an account may make in each window across the
 * instances (platform/http/account-budget.ts), for an account that needs more than the default, or less.
 * Guarded by ADMIN_TOKEN.
 */
export const requestBudgetAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  const { db, accountAccess } = platform
  const defaults = platform.config.accountBudget
  app.addHook('onRequest', app.authenticateAdmin)

  app.get(
    '/accounts/:id/request-budget',
    routeOptions({
      operationId: 'requestBudgetRead',
      summary: "Read an account's request budget",
      description:
        "The account's request budget per window: its own when set, else the default " +
        '(ACCOUNT_REQUEST_BUDGET), with where the account stands in the current window. Operator only.',
      answers: { 404: 'No account with this id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(RequestBudget) },
      errors: [404],
    }),
    async (request) => ok(await getRequestBudget(db, defaults, request.params.id)),
  )

  app.put(
    '/accounts/:id/request-budget',
    routeOptions({
      operationId: 'requestBudgetSet',
      summary: "Set an account's own request budget per window, or null for the default",
      description:
        "Every request authenticated as the account (platform JWTs, apps' access tokens) counts against it, " +
        'on every instance together; past it the API answers 429 with Retry-After until the window ends. ' +
        'Takes effect from the next request on every instance.',
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: RequestBudgetBody,
      response: { 200: Envelope(RequestBudget) },
      errors: [404, 409],
    }),
    async (request) =>
      ok(
        await setRequestBudget(
          db,
          { access: accountAccess, defaults },
          request.params.id,
          request.body.requests,
        ),
      ),
  )
}
