import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { EventWebhookSettings, InboundParseBody, InboundSetup } from './provider-setup.schemas.js'
import { type ProviderSetupDeps, setUpEventWebhook, setUpInboundParse } from './provider-setup.service.js'
import { createSendgridClient } from './sendgrid.js'

/** The email provider's webhooks, set up for the caller's account (its SendGrid subuser). */
export const providerSetupRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  const deps: Omit<ProviderSetupDeps, 'log'> = {
    db,
    mailProvider: config.mail.provider,
    secretsKey: config.secretsKey,
    sendgridApiKey: config.mail.sendgridApiKey,
    sendgrid: createSendgridClient(
      { baseUrl: config.mail.sendgridBaseUrl, parentApiKey: config.mail.sendgridApiKey },
      platform.log,
    ),
    publicBaseUrl: config.publicBaseUrl,
  }

  app.post(
    '/mailprovider/webhook/create',
    {
      onRequest: app.authenticate,
      preHandler: app.requireActiveAccount,
      ...routeOptions({
        operationId: 'providerSetupEventWebhook',
        summary: "Create or update the provider's event webhook, targeting this service's events URL",
        description:
          "Creates or updates the provider's event webhook of the account's subuser so that it posts to this " +
          "service's event URL (PUBLIC_BASE_URL), with events delivered, open, click, bounce, dropped, spam " +
          'report, unsubscribe, group unsubscribe and group resubscribe on, deferred and processed off. No ' +
          'body. Needs MAIL_PROVIDER=sendgrid and a subuser set for the account. A user of the account.',
        answers: {
          200: "The provider's webhook settings",
          400: 'MAIL_PROVIDER is not sendgrid, or no subuser is set for the account',
        },
        tags: ['email'],
        access: 'bearer',
        response: { 200: Envelope(EventWebhookSettings) },
        errors: [400],
      }),
    },
    async (request) => ok(await setUpEventWebhook({ ...deps, log: request.log }, request.auth.account_id)),
  )

  app.post(
    '/mailprovider/webhook/inbound/create',
    {
      onRequest: app.authenticate,
      preHandler: app.requireActiveAccount,
      ...routeOptions({
        operationId: 'providerSetupInboundParse',
        summary: "Create or update the provider's Inbound Parse for a receiving hostname",
        description:
          "Creates or updates the provider's Inbound Parse for `hostname` (spam check on, raw off), posting " +
          "replies to this service's inbound URL; the hostname's MX record must point to the provider. Needs " +
          'MAIL_PROVIDER=sendgrid and a subuser set for the account. A user of the account.',
        answers: {
          200: "The provider's Inbound Parse settings",
          400: 'Not a domain name, MAIL_PROVIDER is not sendgrid, or no subuser is set',
        },
        tags: ['email'],
        access: 'bearer',
        body: InboundParseBody,
        response: { 200: Envelope(InboundSetup) },
        errors: [],
      }),
    },
    async (request) =>
      ok(
        await setUpInboundParse(
          { ...deps, log: request.log },
          request.auth.account_id,
          request.body.hostname,
        ),
      ),
  )
}
