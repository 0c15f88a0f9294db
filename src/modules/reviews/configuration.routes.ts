import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok } from '../../platform/http/envelope.js'
import { routeOptions } from '../../platform/http/route-options.js'
import {
  CONFIGURATION_EXAMPLE,
  ConfigurationList,
  ListQuery,
  PUT_EXAMPLE,
  PutBody,
  SAVED_EXAMPLE,
  SavedEnvelope,
} from './configuration.schemas.js'
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
      description:
        'The auto review request configuration in force for the account: its own, else (for a sub-account ' +
        "with none) its parent account's, as `{ configs, pagination: { page, limit, total } }`. With " +
        'none, `configs` is empty and `total` 0. `page` 0 and 1 both start at the first; `sort_by` is ' +
        'created_at, updated_at or name.',
      tags: ['reviews'],
      access: REVIEWS_READ,
      querystring: ListQuery,
      response: { 200: Envelope(ConfigurationList) },
      example: {
        response: ok({ configs: [CONFIGURATION_EXAMPLE], pagination: { page: 0, limit: 10, total: 1 } }),
      },
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
        description:
          "Creates or replaces the account's configuration, whole (`parentAccount` is the caller's " +
          'parent account, else its own): what the body leaves out is absent afterwards. Refused with the ' +
          "spec's words: 400 `Invalid trigger type`, `Invalid platform: <name>. Allowed: ...`, `Delay " +
          'hours must be positive`; 404 `Template not found` for an unknown `template_id`. What will keep ' +
          'it from sending (a platform without a review link, a trigger nothing connected sends) is ' +
          'accepted and listed in `warnings`.',
        tags: ['reviews'],
        access: REVIEWS_WRITE,
        body: PutBody,
        response: { 200: SavedEnvelope },
        example: { body: PUT_EXAMPLE, response: SAVED_EXAMPLE },
        errors: [400, 401, 403, 404],
        answers: {
          200: 'The configuration stored, with `warnings` of what will keep it from sending',
          400:
            "Invalid request: the spec's `Invalid trigger type`, `Invalid platform: ...`, `Delay hours " +
            'must be positive`, or the field named',
          404: '`Template not found`',
        },
      }),
    },
    async (request) => {
      const { configuration, warnings } = await saveConfiguration(db, request.auth, request.body, webhooks)
      return { ...ok(configuration), warnings }
    },
  )
}
