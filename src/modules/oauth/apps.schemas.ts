import { type Static, Type } from '@sinclair/typebox'
import { Id, LABEL_MAX_LENGTH, Timestamp } from '../../platform/http/schemas.js'

export const App = Type.Object(
  {
    _id: Id({ description: 'The client id' }),
    name: Type.String(),
    redirect_uris: Type.Array(Type.String()),
    scopes: Type.Array(Type.String()),
    active: Type.Boolean({ description: 'False: development mode, refused by /authorize' }),
    public: Type.Boolean({
      description: 'A public client: no client secret, it authenticates by client_id and must use PKCE',
    }),
    created_by: Type.Union([Id(), Type.Null()]),
    webhook_url: Type.Union([Type.String(), Type.Null()]),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'App' },
)
export type AppView = Static<typeof App>

const ClientSecret = Type.String({ description: 'Shown once: only its keyed hash is kept' })
const WebhookSecret = Type.String({
  description: 'Signs webhook notifications (Standard Webhooks, HMAC-SHA256); shown once',
})
export const Credentials = Type.Object(
  { client_id: Id(), client_secret: ClientSecret },
  { title: 'AppCredentials' },
)
export type Credentials = Static<typeof Credentials>

export const WebhookCredentials = Type.Object(
  { client_id: Id(), webhook_secret: WebhookSecret },
  { title: 'AppWebhookCredentials' },
)
export type WebhookCredentials = Static<typeof WebhookCredentials>

export const NewApp = Type.Composite(
  [
    App,
    Type.Object({
      client_id: Id(),
      // Present for every app, as the spec's App has a client_secret; a public client has none (RFC 6749 2.1).
      client_secret: Type.Union([ClientSecret, Type.Null({ description: 'A public app: it has no secret' })]),
      webhook_secret: WebhookSecret,
    }),
  ],
  { title: 'NewApp' },
)
export type NewApp = Static<typeof NewApp>

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 20,
  description: 'Exact strings: https, or http on a loopback address',
})
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: LABEL_MAX_LENGTH }), { maxItems: 50 })
const Name = Type.String({ minLength: 1, maxLength: 200 })

export const CreateAppBody = Type.Object(
  {
    name: Name,
    redirect_uris: RedirectUris,
    scopes: Scopes,
    active: Type.Optional(Type.Boolean({ default: false })),
    public: Type.Optional(Type.Boolean({ default: false })),
    created_by: Type.Optional(Id({ description: 'The user who registered the app' })),
    webhook_url: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { title: 'AppInput' },
)
export type CreateAppBody = Static<typeof CreateAppBody>

export const UpdateAppBody = Type.Object(
  {
    name: Type.Optional(Name),
    redirect_uris: Type.Optional(RedirectUris),
    scopes: Type.Optional(Scopes),
    active: Type.Optional(Type.Boolean()),
    public: Type.Optional(Type.Boolean()),
    // Null first: Fastify's Ajv coerces types, and would turn null into '' for a string branch tried first.
    webhook_url: Type.Optional(Type.Union([Type.Null(), Type.String({ maxLength: 2000 })])),
  },
  { title: 'AppUpdate', minProperties: 1 },
)
export type UpdateAppBody = Static<typeof UpdateAppBody>

/* Examples of the API reference (test/openapi-reference.test.ts checks each against its schema). */

export const APP_INPUT_EXAMPLE = {
  name: 'Calendar Sync',
  redirect_uris: ['https://calendar-sync.example.com/oauth/callback'],
  scopes: ['crm.contacts.read'],
  webhook_url: 'https://calendar-sync.example.com/platform-events',
} satisfies Partial<CreateAppBody>

export const NEW_APP_EXAMPLE = {
  _id: '65f1c0ffee0000000000a101',
  client_id: '65f1c0ffee0000000000a101',
  ...APP_INPUT_EXAMPLE,
  active: false,
  public: false,
  created_by: null,
  created_at: '2026-03-01T12:00:00.000Z',
  updated_at: '2026-03-01T12:00:00.000Z',
  client_secret: 'cs_4f9d2c7a1b8e6f3d0a5c9e2b7d4f1a8c',
  webhook_secret: 'whsec_9a3e7c1f5b2d8e4a6c0f3b7d1e5a9c2f',
} satisfies NewApp
