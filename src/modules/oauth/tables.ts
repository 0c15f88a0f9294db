import { sql } from 'drizzle-orm'
import { boolean, index, pgTable, text } from 'drizzle-orm/pg-core'
import { createdAt, idColumn, idFormat, updatedAt } from '../../platform/db/columns.js'

/** What a third-party app may ask for; seeded with the spec's nine scopes by the migration. */
export const oauthScopes = pgTable('oauth_scopes', {
  scope: text('scope').primaryKey(),
  description: text('description').notNull(),
  category: text('category').notNull(),
})

/** A third-party app: its id is the OAuth client id. Not account-owned: apps serve many accounts. */
export const oauthApps = pgTable(
  'oauth_apps',
  {
    id: idColumn(),
    name: text('name').notNull(),
    /** HMAC-SHA256 of the secret under a server key (apps.ts): the secret itself is shown once. */
    clientSecretHash: text('client_secret_hash').notNull(),
    /** Exact strings; a redirect must equal one of them. */
    redirectUris: text('redirect_uris').array().notNull(),
    scopes: text('scopes').array().notNull().default(sql`'{}'::text[]`),
    /** False: development mode, refused by /authorize. */
    active: boolean('active').notNull().default(false),
    /** A public client (no safe place for a secret) must use PKCE. */
    isPublic: boolean('is_public').notNull().default(false),
    createdBy: text('created_by'),
    webhookUrl: text('webhook_url'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('oauth_apps_id_format', t.id), index('oauth_apps_created').on(t.createdAt)],
)
