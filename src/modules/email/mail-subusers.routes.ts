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
      description:
        "Sets the provider subuser (its username and API key) the account's mail is sent through; the key is " +
        'sealed with SECRETS_ENCRYPTION_KEY and never shown again. Operator only.',
      answers: { 404: 'No account with this id', 409: 'The account is being removed, or was' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: SetMailSubuserBody,
      response: { 200: Envelope(MailSubuser) },
      errors: [404, 409],
    }),
    async (request) =>
      ok(await setMailSubuser(platform.db, platform.config.secretsKey, request.params.id, request.body)),
  )
}
