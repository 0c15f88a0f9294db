import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import { MailSubuser, SetMailSubuserBody } from './mail-subusers.schemas.js'
import { setMailSubuser } from './mail-subusers.service.js'

/** Provisioning of the email area through the admin API (ADMIN_TOKEN). */
export const emailAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  app.addHook('onRequest', app.authenticateAdmin)

  app.put(
    '/accounts/:id/mail-subuser',
    routeOptions({
      operationId: 'mailSubuserSet',
      summary: "Set the SendGrid subuser the account's mail goes through (the key is stored encrypted)",
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: SetMailSubuserBody,
      response: { 200: Envelope(MailSubuser) },
      errors: [400, 401, 404, 409],
    }),
    async (request) =>
      ok(await setMailSubuser(platform.db, platform.config.secretsKey, request.params.id, request.body)),
  )
}
