import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok } from '../../platform/http/envelope.js'
import { setUpEventWebhook, setUpInboundParse } from './provider-setup.service.js'
import { createSendgridClient } from './sendgrid.js'

// additionalProperties: the provider's settings are answered as returned, fields we do not name included.
const EventWebhookSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    url: Type.String(),
    delivered: Type.Boolean(),
    open: Type.Boolean(),
    click: Type.Boolean(),
    bounce: Type.Boolean(),
    dropped: Type.Boolean(),
    spam_report: Type.Boolean(),
    unsubscribe: Type.Boolean(),
    group_unsubscribe: Type.Boolean(),
    group_resubscribe: Type.Boolean(),
    deferred: Type.Boolean(),
    processed: Type.Boolean(),
  },
  { additionalProperties: true, description: "SendGrid's event webhook settings of the account's subuser" },
)

const ParseSettings = Type.Object(
  { hostname: Type.String(), url: Type.String(), spam_check: Type.Boolean(), send_raw: Type.Boolean() },
  { additionalProperties: true, description: "SendGrid's Inbound Parse settings for the hostname" },
)

const InboundSetup = Type.Object({
  settings: ParseSettings,
  mx_record: Type.Object(
    {
      type: Type.Literal('MX'),
      host: Type.String(),
      value: Type.String(),
      priority: Type.Integer(),
    },
    { description: 'The DNS record the hostname must carry for its mail to reach the provider' },
  ),
})

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
        body: Type.Object({
          hostname: Type.String({
            minLength: 1,
            maxLength: 254,
            description: 'The domain that receives replies, e.g. reply.example.com',
          }),
        }),
        response: { 200: Envelope(InboundSetup), ...errorResponses(400, 401, 403) },
      },
    },
    async (request) =>
      ok(await setUpInboundParse(context(request.log), request.auth.account_id, request.body.hostname)),
  )
}
