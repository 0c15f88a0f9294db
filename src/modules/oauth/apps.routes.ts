import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { routeOptions } from '../../platform/http/route-options.js'
import { IdParams } from '../../platform/http/schemas.js'
import {
  APP_INPUT_EXAMPLE,
  App,
  CreateAppBody,
  Credentials,
  NEW_APP_EXAMPLE,
  NewApp,
  UpdateAppBody,
  WebhookCredentials,
} from './apps.schemas.js'
import {
  createApp,
  getApp,
  listApps,
  rotateClientSecret,
  rotateWebhookSecret,
  updateApp,
} from './apps.service.js'
import { appWebhookAddresses, assertWebhookUrlAddress } from './webhooks.service.js'

/** Registration of third-party apps through the admin API (ADMIN_TOKEN). */
export const appsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db } = platform
  const { secretsKey } = platform.config
  const webhookAddresses = appWebhookAddresses(platform.config)
  app.addHook('onRequest', app.authenticateAdmin)

  app.post(
    '/oauth/apps',
    routeOptions({
      operationId: 'appsCreate',
      summary: 'Register an app; the answer holds its client_secret and webhook_secret, shown this once',
      description:
        'Registers a third-party app with its name, redirect URIs (exact matches, https or a loopback http), ' +
        'the scopes it may ask for and, optionally, a webhook URL for account events. A confidential app gets ' +
        'a `client_secret`, and a webhook URL a `webhook_secret`: both are shown in this answer only, kept ' +
        'hashed or sealed. The app starts in development mode (`active: false`), where the authorization page ' +
        'refuses it (`App is in dev mode`), until `PATCH` makes it active. Operator only.',
      answers: {
        201: 'The app, with its secrets shown this once',
        503: 'SECRETS_ENCRYPTION_KEY is not set: no secret can be kept',
      },
      example: { body: APP_INPUT_EXAMPLE, response: ok(NEW_APP_EXAMPLE) },
      tags: ['admin'],
      access: 'admin',
      body: CreateAppBody,
      // 503: SECRETS_ENCRYPTION_KEY is not set, so no secret can be kept.
      response: { 201: Envelope(NewApp) },
      errors: [],
    }),
    async (request, reply) => {
      assertWebhookUrlAddress(webhookAddresses, request.body.webhook_url)
      return reply.status(201).send(ok(await createApp(db, secretsKey, request.body)))
    },
  )

  app.get(
    '/oauth/apps',
    routeOptions({
      operationId: 'appsList',
      summary: 'List apps, newest first',
      description: 'Every registered app, newest first, without secrets. Operator only.',
      tags: ['admin'],
      access: 'admin',
      querystring: PageQuery(20, 100),
      response: { 200: PageEnvelope(App) },
      errors: [],
    }),
    async (request) => {
      const { data, pagination } = await listApps(db, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/oauth/apps/:id',
    routeOptions({
      operationId: 'appsGet',
      summary: 'Read an app',
      description:
        'The app with its redirect URIs, scopes, webhook URL and mode, without secrets. Operator only.',
      answers: { 404: 'No app with this client id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(App) },
      errors: [404],
    }),
    async (request) => ok(await getApp(db, request.params.id)),
  )

  app.patch(
    '/oauth/apps/:id',
    routeOptions({
      operationId: 'appsUpdate',
      summary: 'Change an app; active: true takes it out of development mode',
      description:
        'Changes the fields given of the app; `active: true` takes it out of development mode so that users ' +
        'may authorize it. Operator only.',
      answers: { 404: 'No app with this client id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      body: UpdateAppBody,
      response: { 200: Envelope(App) },
      errors: [404],
    }),
    async (request) => {
      assertWebhookUrlAddress(webhookAddresses, request.body.webhook_url)
      return ok(await updateApp(db, request.params.id, request.body))
    },
  )

  app.post(
    '/oauth/apps/:id/secret',
    routeOptions({
      operationId: 'appsRotateSecret',
      summary: 'Rotate the client secret: the new one is shown once, the old one stops working',
      description:
        'Gives the app a new client secret, shown in this answer only; the old one stops working at once, so ' +
        "the app's token requests need the new one. A public app (PKCE only) has none. Operator only.",
      answers: { 200: 'The new client secret, shown this once', 404: 'No app with this client id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(Credentials) },
      errors: [404],
    }),
    async (request) => ok(await rotateClientSecret(db, secretsKey, request.params.id)),
  )

  app.post(
    '/oauth/apps/:id/webhook-secret',
    routeOptions({
      operationId: 'appsRotateWebhookSecret',
      summary: 'Rotate the webhook signing secret: the new one is shown once and signs from now on',
      description:
        'Gives the app a new webhook signing secret, shown in this answer only; deliveries are signed with it ' +
        'from now on. Operator only.',
      answers: { 200: 'The new webhook secret, shown this once', 404: 'No app with this client id' },
      tags: ['admin'],
      access: 'admin',
      params: IdParams,
      response: { 200: Envelope(WebhookCredentials) },
      errors: [404],
    }),
    async (request) => ok(await rotateWebhookSecret(db, secretsKey, request.params.id)),
  )
}
