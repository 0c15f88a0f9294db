import { sql } from 'drizzle-orm'
import { boolean, index, jsonb, pgTable, primaryKey, text, uniqueIndex } from 'drizzle-orm/pg-core'
import {
  accountIdColumn,
  createdAt,
  idColumn,
  idFormat,
  timestampColumn,
  updatedAt,
} from '../../platform/db/columns.js'

/** What a third-party app may ask for; seeded by migrations: the spec's nine scopes, and the reviews module's two. */
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
    /**
     * HMAC-SHA256 of the secret under a server key (apps.service.ts): the secret itself is shown once. Null
     * for a public app, which has none.
     */
    clientSecretHash: text('client_secret_hash'),
    /** Exact strings; a redirect must equal one of them. */
    redirectUris: text('redirect_uris').array().notNull(),
    scopes: text('scopes').array().notNull().default(sql`'{}'::text[]`),
    /** False: development mode, refused by /authorize. */
    active: boolean('active').notNull().default(false),
    /** A public client (no safe place for a secret) must use PKCE. */
    isPublic: boolean('is_public').notNull().default(false),
    createdBy: text('created_by'),
    webhookUrl: text('webhook_url'),
    /**
     * Signs the app's webhook notifications; sealed (secret-box.ts), since signing needs the secret itself.
     * Null for apps registered before webhooks were signed: they get one by rotating it.
     */
    webhookSecretSealed: text('webhook_secret_sealed'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('oauth_apps_id_format', t.id), index('oauth_apps_created').on(t.createdAt)],
)

/** An authorization code, kept as its SHA-256: single use, 10 minutes, bound to all it was issued for. */
export const oauthCodes = pgTable(
  'oauth_codes',
  {
    id: idColumn(),
    codeHash: text('code_hash').notNull(),
    clientId: text('client_id').notNull(),
    userId: text('user_id').notNull(),
    accountId: accountIdColumn(),
    scopes: text('scopes').array().notNull(),
    redirectUri: text('redirect_uri').notNull(),
    /** PKCE (S256 only); null when the client sent none. */
    codeChallenge: text('code_challenge'),
    expiresAt: timestampColumn('expires_at').notNull(),
    usedAt: timestampColumn('used_at'),
    createdAt: createdAt(),
  },
  (t) => [idFormat('oauth_codes_id_format', t.id), uniqueIndex('oauth_codes_hash').on(t.codeHash)],
)

/**
 * A refresh token, kept as its SHA-256. Tokens of one grant (`code_id`: the code that started it) form a
 * chain: each refresh replaces the token, and using a replaced one after the grace period revokes them all.
 */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    id: idColumn(),
    tokenHash: text('token_hash').notNull(),
    codeId: text('code_id').notNull(),
    clientId: text('client_id').notNull(),
    userId: text('user_id').notNull(),
    accountId: accountIdColumn(),
    scopes: text('scopes').array().notNull(),
    expiresAt: timestampColumn('expires_at').notNull(),
    /** When a refresh replaced it; it stays usable for the grace period after. */
    replacedAt: timestampColumn('replaced_at'),
    revokedAt: timestampColumn('revoked_at'),
    lastUsed: timestampColumn('last_used'),
    createdAt: createdAt(),
  },
  (t) => [
    idFormat('oauth_refresh_tokens_id_format', t.id),
    uniqueIndex('oauth_refresh_tokens_hash').on(t.tokenHash),
    // Every query by grant wants its unrevoked tokens; a refresh revokes the older ones, so a grant
    // refreshed hourly for 90 days keeps two rows here instead of 2,000 (0.31 → 0.03 ms a refresh).
    index('oauth_refresh_tokens_live_code').on(t.codeId).where(sql`${t.revokedAt} is null`),
    // The apps holding a live grant in an account: who is told of the account's changes.
    index('oauth_refresh_tokens_account').on(t.accountId, t.clientId),
    // When a token stopped being usable (revoked, else expired): its retention (retention.repository.ts).
    index('oauth_refresh_tokens_unusable_since').on(sql`least(${t.revokedAt}, ${t.expiresAt})`),
  ],
)

/** Scopes a user allowed an app in an account: asked again only for scopes beyond these. */
export const oauthConsents = pgTable(
  'oauth_consents',
  {
    accountId: accountIdColumn(),
    userId: text('user_id').notNull(),
    clientId: text('client_id').notNull(),
    scopes: text('scopes').array().notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [primaryKey({ name: 'oauth_consents_pkey', columns: [t.accountId, t.userId, t.clientId] })],
)

/** What happened to grants and tokens, for operators: who, which app, from where. Never tokens themselves. */
export const oauthAuditEvents = pgTable(
  'oauth_audit_events',
  {
    id: idColumn(),
    event: text('event').notNull(),
    clientId: text('client_id'),
    userId: text('user_id'),
    accountId: text('account_id'),
    ip: text('ip'),
    detail: jsonb('detail').$type<Record<string, unknown>>().notNull().default({}),
    createdAt: createdAt(),
  },
  (t) => [
    idFormat('oauth_audit_events_id_format', t.id),
    index('oauth_audit_events_client').on(t.clientId, t.createdAt, t.id),
    index('oauth_audit_events_account').on(t.accountId, t.createdAt, t.id),
  ],
)
