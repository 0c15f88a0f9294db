import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, errorResponses, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { IdParams } from '../../platform/http/schemas.js'
import { App, CreateAppBody, Credentials, NewApp, UpdateAppBody, WebhookCredentials } from './apps.schemas.js'
import {
  createApp,
  getApp,
  listApps,
  rotateClientSecret,
  rotateWebhookSecret,
  updateApp,
} from './apps.service.js'

/** Registration of third-party apps through the admin API (ADMIN_TOKEN). */
export const appsRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  app.addHook('onRequest', app.authenticateAdmin)
  const admin = (operationId: string, summary: string) => ({
    operationId,
    tags: ['admin'],
    summary,
    security: [{ admin: [] }],
  })

  app.post(
    '/oauth/apps',
    {
      schema: {
        ...admin(
          'appsCreate',
          'Register an app; the answer holds its client_secret and webhook_secret, shown this once',
        ),
        body: CreateAppBody,
        // 503: SECRETS_ENCRYPTION_KEY is not set, so no secret can be kept.
        response: { 201: Envelope(NewApp), ...errorResponses(400, 401, 503) },
      },
    },
    async (request, reply) => reply.status(201).send(ok(await createApp(db, config, request.body))),
  )

  app.get(
    '/oauth/apps',
    {
      schema: {
        ...admin('appsList', 'List apps, newest first'),
        querystring: PageQuery(20, 100),
        response: { 200: PageEnvelope(App), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const { data, pagination } = await listApps(db, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/oauth/apps/:id',
    {
      schema: {
        ...admin('appsGet', 'Read an app'),
        params: IdParams,
        response: { 200: Envelope(App), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await getApp(db, request.params.id)),
  )

  app.patch(
    '/oauth/apps/:id',
    {
      schema: {
        ...admin('appsUpdate', 'Change an app; active: true takes it out of development mode'),
        params: IdParams,
        body: UpdateAppBody,
        response: { 200: Envelope(App), ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => ok(await updateApp(db, request.params.id, request.body)),
  )

  app.post(
    '/oauth/apps/:id/secret',
    {
      schema: {
        ...admin(
          'appsRotateSecret',
          'Rotate the client secret: the new one is shown once, the old one stops working',
        ),
        params: IdParams,
        response: { 200: Envelope(Credentials), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request) => ok(await rotateClientSecret(db, config, request.params.id)),
  )

  app.post(
    '/oauth/apps/:id/webhook-secret',
    {
      schema: {
        ...admin(
          'appsRotateWebhookSecret',
          'Rotate the webhook signing secret: the new one is shown once and signs from now on',
        ),
        params: IdParams,
        response: { 200: Envelope(WebhookCredentials), ...errorResponses(400, 401, 404, 503) },
      },
    },
    async (request) => ok(await rotateWebhookSecret(db, config, request.params.id)),
  )
}
