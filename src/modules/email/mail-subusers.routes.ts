import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { Id, IdParams, Timestamp } from '../../platform/http/schemas.js'
import { setMailSubuser } from './mail-subusers.service.js'

const MailSubuser = Type.Object({
  account_id: Id(),
  username: Type.String(),
  api_key_set: Type.Literal(true),
  updated_at: Timestamp(),
})

/** Provisioning of the email area through the admin API (ADMIN_TOKEN). */
export const emailAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.put(
    '/accounts/:id/mail-subuser',
    {
      schema: {
        operationId: 'mailSubuserSet',
        tags: ['admin'],
        summary: "Set the SendGrid subuser the account's mail goes through (the key is stored encrypted)",
        security: [{ admin: [] }],
        params: IdParams,
        body: Type.Object({
          username: Type.String({ minLength: 1 }),
          api_key: Type.String({ minLength: 1 }),
        }),
        response: { 200: Envelope(MailSubuser), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) =>
      ok(await setMailSubuser(platform.db, platform.config, request.params.id, request.body)),
  )
}
