import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { AccountRemoval } from './account-removal.schemas.js'
import { getRemoval, requestRemoval } from './account-removal.service.js'
import { removalDepsOf } from './jobs.js'

/**
 * `DELETE /v1/admin/accounts/:id` and `GET /v1/admin/accounts/:id/removal`: an account and its sub-accounts
 * removed by a background job, and how far it is. Guarded by ADMIN_TOKEN.
 */
export const accountRemovalAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (
  app,
  { platform },
) => {
  const deps = removalDepsOf(platform)
  app.addHook('onRequest', app.authenticateAdmin)

  app.delete(
    '/accounts/:id',
    routeOptions({
      operationId: 'accountRemove',
      summary:
        'Remove an account and its sub-accounts: refused at once, their rows and provider state removed by a ' +
        'background job (202, Location: the removal); asked again, the same removal',
      description:
        'Removes the account and its sub-accounts: from this answer on they refuse every token, and a ' +
        'background job deletes their rows and provider state. Asked again, it answers the same removal. ' +
        'Follow it with `GET /v1/admin/accounts/{id}/removal` (the `Location`). Operator only; it cannot be ' +
        'undone.',
      answers: {
        202: 'The removal, under way',
        404: 'No account with this id',
        409: 'A removal of this account was asked for at the same time',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 202: Envelope(AccountRemoval) },
      errors: [404, 409],
    }),
    async (request, reply) => {
      const removal = await requestRemoval(deps, request.params.id)
      return reply
        .status(202)
        .header('location', `/v1/admin/accounts/${request.params.id}/removal`)
        .send(ok(removal))
    },
  )

  app.get(
    '/accounts/:id/removal',
    routeOptions({
      operationId: 'accountRemovalRead',
      summary: "Read how far an account's removal is: its status and the rows deleted, table by table",
      description:
        "How far the account's removal is: its status (queued, running, done or failed) and the rows deleted, " +
        'table by table. Operator only.',
      answers: { 404: 'No removal of this account' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(AccountRemoval) },
      errors: [404],
    }),
    async (request) => ok(await getRemoval(platform.db, request.params.id)),
  )
}
