import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { leadsDepsOf } from './deps.js'
import { REGISTRATION_EXAMPLE, RegisterWebhookBody, RegisterWebhookResponse } from './registration.schemas.js'
import { registerWebhook } from './registration.service.js'

/** Lead webhook registration, under `/socialnet/accounts/webhook` of both integration prefixes. */
export const registrationRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { publicBaseUrl, leads } = platform.config
  app.addHook('onRequest', app.authenticate)

  app.post(
    '/socialnet/accounts/webhook',
    routeOptions({
      operationId: 'leadWebhookRegister',
      summary:
        "Subscribe the campaign's page to lead events and register our webhook with Meta (`{ success: true }` alone when the campaign is not found)",
      description:
        "Registers lead delivery for the campaign's page, in the spec's steps: the app token, the " +
        "account's stored `socialnet-leads` token (exchanged when expired) and a fresh page token; the " +
        "app subscribed to the page's `leadgen`; the webhook subscription (object `page`, callback " +
        'PUBLIC_BASE_URL/webhooks/socialnet/leads with the verify token); then the registration stored. A ' +
        'campaign not found (or deleted) answers exactly `{ success: true }`; no stored token, 400 `Record ' +
        "Not found!`. Any failure of Graph's steps answers 400 `ERROR_CREATING_WEBHOOK` with the " +
        "provider's message in `additional_info`.",
      tags: ['leads'],
      access: 'bearer',
      body: RegisterWebhookBody,
      response: { 200: RegisterWebhookResponse },
      example: { body: { campaign_id: '65f1c0ffee0000000000d001' }, response: ok(REGISTRATION_EXAMPLE) },
      // Every failure of the registration is the spec's 400 ERROR_CREATING_WEBHOOK; 503 only when
      // SECRETS_ENCRYPTION_KEY is unset, as on every route that keeps a token.
      errors: [400, 401, 403, 503],
      answers: {
        200: 'The registration, or `{ success: true }` alone when the campaign is not found',
        400:
          'Invalid request, `Record Not found!` (no stored token), or `ERROR_CREATING_WEBHOOK` with the ' +
          "provider's message in `additional_info`",
      },
    }),
    async (request) => {
      const deps = {
        ...leadsDepsOf(platform),
        log: request.log,
        publicBaseUrl,
        verifyToken: leads.verifyToken,
      }
      const registration = await registerWebhook(deps, request.auth, request.body)
      return registration ? ok(registration) : { success: true as const }
    },
  )
}
