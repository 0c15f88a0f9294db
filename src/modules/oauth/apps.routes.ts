import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox'
import { Type } from '@sinclair/typebox'
import type { ModuleOptions } from '../../platform/context.js'
import { Envelope, ok, okPage, PageEnvelope } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, IdParams, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import {
  createApp,
  getApp,
  listApps,
  listScopes,
  rotateClientSecret,
  rotateWebhookSecret,
  updateApp,
} from './apps.service.js'
import { AUDIT_EVENTS, listAudit } from './audit.service.js'

const Scope = Type.Object({ scope: Type.String(), description: Type.String(), category: Type.String() })

const App = Type.Object({
  _id: Id({ description: 'The client id' }),
  name: Type.String(),
  redirect_uris: Type.Array(Type.String()),
  scopes: Type.Array(Type.String()),
  active: Type.Boolean({ description: 'False: development mode, refused by /authorize' }),
  public: Type.Boolean({ description: 'A public client, which must use PKCE' }),
  created_by: Type.Union([Id(), Type.Null()]),
  webhook_url: Type.Union([Type.String(), Type.Null()]),
  created_at: Timestamp(),
  updated_at: Timestamp(),
})

const AuditEvent = Type.Object({
  _id: Id(),
  event: StringEnum(AUDIT_EVENTS),
  client_id: Type.Union([Id(), Type.Null()]),
  user_id: Type.Union([Id(), Type.Null()]),
  account_id: Type.Union([Id(), Type.Null()]),
  ip: Type.Union([Type.String(), Type.Null()]),
  detail: Type.Record(Type.String(), Type.Unknown()),
  created_at: Timestamp(),
})

const ClientSecret = Type.String({ description: 'Shown once: only its keyed hash is kept' })
const WebhookSecret = Type.String({
  description: 'Signs webhook notifications (Standard Webhooks, HMAC-SHA256); shown once',
})
const Credentials = Type.Object({ client_id: Id(), client_secret: ClientSecret })
const NewApp = Type.Composite([App, Credentials, Type.Object({ webhook_secret: WebhookSecret })])

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 20,
  description: 'Exact strings: https, or http on a loopback address',
})
const Scopes = Type.Array(Type.String({ minLength: 1 }), { maxItems: 50 })
const Name = Type.String({ minLength: 1, maxLength: 200 })

const CreateAppBody = Type.Object({
  name: Name,
  redirect_uris: RedirectUris,
  scopes: Scopes,
  active: Type.Optional(Type.Boolean({ default: false })),
  public: Type.Optional(Type.Boolean({ default: false })),
  created_by: Type.Optional(Id({ description: 'The user who registered the app' })),
  webhook_url: Type.Optional(Type.String({ maxLength: 2000 })),
})

const UpdateAppBody = Type.Object(
  {
    name: Type.Optional(Name),
    redirect_uris: Type.Optional(RedirectUris),
    scopes: Type.Optional(Scopes),
    active: Type.Optional(Type.Boolean()),
    public: Type.Optional(Type.Boolean()),
    // Null first: Fastify's Ajv coerces types, and would turn null into '' for a string branch tried first.
    webhook_url: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 2000 })])),
  },
  { minProperties: 1 },
)

/** Registration of third-party apps and the scope table, through the admin API (ADMIN_TOKEN). */
export const oauthAdminRoutes: FastifyPluginAsyncTypebox<ModuleOptions> = async (app, { platform }) => {
  const { db, config } = platform
  app.addHook('onRequest', app.authenticateAdmin)
  const admin = (summary: string) => ({ tags: ['admin'], summary, security: [{ admin: [] }] })

  app.get(
    '/oauth/scopes',
    { schema: { ...admin('The scopes apps may ask for'), response: { 200: Envelope(Type.Array(Scope)) } } },
    async () => ok(await listScopes(db)),
  )

  app.post(
    '/oauth/apps',
    {
      schema: {
        ...admin('Register an app; the answer holds its client_secret and webhook_secret, shown this once'),
        body: CreateAppBody,
        response: { 201: Envelope(NewApp) },
      },
    },
    async (request, reply) => reply.status(201).send(ok(await createApp(db, config, request.body))),
  )

  app.get(
    '/oauth/apps',
    {
      schema: {
        ...admin('List apps, newest first'),
        querystring: PageQuery(20, 100),
        response: { 200: PageEnvelope(App) },
      },
    },
    async (request) => {
      const { data, pagination } = await listApps(db, request.query)
      return okPage(data, pagination)
    },
  )

  app.get(
    '/oauth/apps/:id',
    { schema: { ...admin('Read an app'), params: IdParams, response: { 200: Envelope(App) } } },
    async (request) => ok(await getApp(db, request.params.id)),
  )

  app.patch(
    '/oauth/apps/:id',
    {
      schema: {
        ...admin('Change an app; active: true takes it out of development mode'),
        params: IdParams,
        body: UpdateAppBody,
        response: { 200: Envelope(App) },
      },
    },
    async (request) => ok(await updateApp(db, request.params.id, request.body)),
  )

  app.get(
    '/oauth/audit',
    {
      schema: {
        ...admin('What happened to grants and tokens, newest first (optionally of one app or account)'),
        querystring: Type.Composite([
          Type.Object({ client_id: Type.Optional(Id()), account_id: Type.Optional(Id()) }),
          PageQuery(50, 200),
        ]),
        response: { 200: PageEnvelope(AuditEvent) },
      },
    },
    async (request) => {
      const { data, pagination } = await listAudit(db, request.query)
      return okPage(data, pagination)
    },
  )

  app.post(
    '/oauth/apps/:id/secret',
    {
      schema: {
        ...admin('Rotate the client secret: the new one is shown once, the old one stops working'),
        params: IdParams,
        response: { 200: Envelope(Credentials) },
      },
    },
    async (request) => ok(await rotateClientSecret(db, config, request.params.id)),
  )

  app.post(
    '/oauth/apps/:id/webhook-secret',
    {
      schema: {
        ...admin('Rotate the webhook signing secret: the new one is shown once and signs from now on'),
        params: IdParams,
        response: { 200: Envelope(Type.Object({ client_id: Id(), webhook_secret: WebhookSecret })) },
      },
    },
    async (request) => ok(await rotateWebhookSecret(db, config, request.params.id)),
  )
}
