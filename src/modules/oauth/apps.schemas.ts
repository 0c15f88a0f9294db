import { type Static, Type } from '@sinclair/typebox'
import { Id, LABEL_MAX_LENGTH, Timestamp } from '../../platform/http/schemas.js'

export const App = Type.Object({
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
})
export type AppView = Static<typeof App>

const ClientSecret = Type.String({ description: 'Shown once: only its keyed hash is kept' })
const WebhookSecret = Type.String({
  description: 'Signs webhook notifications (Standard Webhooks, HMAC-SHA256); shown once',
})
export const Credentials = Type.Object({ client_id: Id(), client_secret: ClientSecret })
export type Credentials = Static<typeof Credentials>

export const WebhookCredentials = Type.Object({ client_id: Id(), webhook_secret: WebhookSecret })
export type WebhookCredentials = Static<typeof WebhookCredentials>

export const NewApp = Type.Composite([
  App,
  Type.Object({
    client_id: Id(),
    // Present for every app, as the spec's App has a client_secret; a public client has none (RFC 6749 2.1).
    client_secret: Type.Union([ClientSecret, Type.Null({ description: 'A public app: it has no secret' })]),
    webhook_secret: WebhookSecret,
  }),
])
export type NewApp = Static<typeof NewApp>

const RedirectUris = Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), {
  minItems: 1,
  maxItems: 20,
  description: 'Exact strings: https, or http on a loopback address',
})
const Scopes = Type.Array(Type.String({ minLength: 1, maxLength: LABEL_MAX_LENGTH }), { maxItems: 50 })
const Name = Type.String({ minLength: 1, maxLength: 200 })

export const CreateAppBody = Type.Object({
  name: Name,
  redirect_uris: RedirectUris,
  scopes: Scopes,
  active: Type.Optional(Type.Boolean({ default: false })),
  public: Type.Optional(Type.Boolean({ default: false })),
  created_by: Type.Optional(Id({ description: 'The user who registered the app' })),
  webhook_url: Type.Optional(Type.String({ maxLength: 2000 })),
})
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
  { minProperties: 1 },
)
export type UpdateAppBody = Static<typeof UpdateAppBody>
