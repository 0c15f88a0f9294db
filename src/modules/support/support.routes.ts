import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { Id, IdParams, Timestamp } from '../../platform/http/schemas.js'
import { createInbox } from './support.service.js'

const SupportInbox = Type.Object({
  _id: Id(),
  account_id: Id(),
  type: Type.String(),
  name: Type.String(),
  is_default: Type.Boolean(),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

/** Provisioning of the support inbox through the admin API (ADMIN_TOKEN). */
export const supportAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/accounts/:id/support-inboxes',
    {
      schema: {
        operationId: 'supportInboxCreate',
        tags: ['admin'],
        summary: "Create a support inbox; a default one replaces the account's previous default of its type",
        security: [{ admin: [] }],
        params: IdParams,
        body: Type.Object({
          type: Type.String({
            pattern: '^[a-z][a-z0-9_]{0,63}$',
            description: 'e.g. email_inbound: replies to sent emails arrive in the default one',
          }),
          name: Type.String({ minLength: 1, maxLength: 200 }),
          is_default: Type.Optional(Type.Boolean({ default: false })),
        }),
        response: { 200: Envelope(SupportInbox), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await createInbox(platform.db, request.params.id, request.body)),
  )
}
