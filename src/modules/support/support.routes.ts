import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { CreateInboxBody, SupportInbox } from './support.schemas.js'
import { createInbox } from './support.service.js'

/** Provisioning of the support inbox through the admin API (ADMIN_TOKEN). */
export const supportAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts/:id/support-inboxes',
    routeOptions({
      operationId: 'supportInboxCreate',
      summary: "Create a support inbox; a default one replaces the account's previous default of its type",
      description:
        'Creates a support inbox of the account: where support conversations land (inbound replies to email ' +
        "go to the default inbox of type `email_inbound`). A default inbox replaces the account's previous " +
        'default of its type. Operator only.',
      answers: {
        200: 'The inbox created',
        404: 'No account with this id',
        409: 'The account is being removed, or was',
      },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: CreateInboxBody,
      response: { 200: Envelope(SupportInbox) },
      errors: [404, 409],
    }),
    async (request) => ok(await createInbox(platform.db, request.params.id, request.body)),
  )
}
