import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { EventWebhookSettings, InboundParseBody, InboundSetup } from './provider-setup.schemas.js'
import { setUpEventWebhook, setUpInboundParse } from './provider-setup.service.js'
import { createSendgridClient } from './sendgrid.js'

/** The email provider's webhooks, set up for the caller's account (its SendGrid subuser). */
export const providerSetupRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  const sendgrid = createSendgridClient(
    { baseUrl: config.mail.sendgridBaseUrl, parentApiKey: config.mail.sendgridApiKey },
    platform.log,
  )
  const context = (log: typeof platform.log) => ({ db, config, sendgrid, log })

  app.post(
    '/mailprovider/webhook/create',
    {
      onRequest: app.authenticate,
      preHandler: app.requireActiveAccount,
      schema: {
        operationId: 'providerSetupEventWebhook',
        tags: ['email'],
        summary: "Create or update the provider's event webhook, targeting this service's events URL",
        security: [{ bearer: [] }],
        response: { 200: Envelope(EventWebhookSettings), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => ok(await setUpEventWebhook(context(request.log), request.auth.account_id)),
  )

  app.post(
    '/mailprovider/webhook/inbound/create',
    {
      onRequest: app.authenticate,
      preHandler: app.requireActiveAccount,
      schema: {
        operationId: 'providerSetupInboundParse',
        tags: ['email'],
        summary: "Create or update the provider's Inbound Parse for a receiving hostname",
        security: [{ bearer: [] }],
        body: InboundParseBody,
        response: { 200: Envelope(InboundSetup), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) =>
      ok(await setUpInboundParse(context(request.log), request.auth.account_id, request.body.hostname)),
  )
}
