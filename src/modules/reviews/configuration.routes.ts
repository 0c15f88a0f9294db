import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { ConfigurationList, ListQuery, PutBody, SavedEnvelope } from './configuration.schemas.js'
import { listConfigurationsInForce, refuseInvalidFields, saveConfiguration } from './configuration.service.js'
import { REVIEWS_READ, REVIEWS_WRITE } from './review-access.service.js'

/** The spec's auto review request configuration, under both reviews prefixes. */
export const configurationRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const webhooks = {
    stripe: platform.config.reviews.stripeWebhookSecret !== undefined,
    square: platform.config.reviews.square.webhookSignatureKey !== undefined,
  }
  app.addHook('onRequest', app.authenticate)

  app.get(
    '/auto-review-request',
    routeOptions({
      operationId: 'reviewConfigurationList',
      summary: "The account's auto review request configuration, else its parent account's",
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: ListQuery,
      response: { 200: Envelope(ConfigurationList) },
      errors: [400, 401, 403],
    }),
    async (request) => ok(await listConfigurationsInForce(db, request.auth, request.query)),
  )

  app.put(
    '/auto-review-request',
    {
      // The spec's words for a wrong trigger, platform or delay come before the schema names a missing field.
      preValidation: async (request) => refuseInvalidFields(request.body),
      ...routeOptions({
        operationId: 'reviewConfigurationPut',
        summary: "Create or replace the account's auto review request configuration",
        tags: ['reviews'],
        access: REVIEWS_WRITE,
        body: PutBody,
        response: { 200: SavedEnvelope },
        errors: [400, 401, 403, 404],
      }),
    },
    async (request) => {
      const { configuration, warnings } = await saveConfiguration(db, request.auth, request.body, webhooks)
      return { ...ok(configuration), warnings }
    },
  )
}
