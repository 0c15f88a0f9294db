import { sql } from 'drizzle-orm'
import {
  boolean,
  check,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import {
  accountIdColumn,
  accountKey,
  createdAt,
  idColumn,
  idFormat,
  ownedIdColumn,
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
    id: ownedIdColumn(),
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
  (t) => [
    accountKey('oauth_codes', t),
    idFormat('oauth_codes_id_format', t.id),
    // Retention's batches, across accounts by nature, found along the id (its time: platform/jobs/retention.ts).
    index('oauth_codes_id').on(t.id),
    uniqueIndex('oauth_codes_hash').on(t.codeHash),
  ],
)

/**
 * A refresh token, kept as its SHA-256. Tokens of one grant (`code_id`: the code that started it) form a
 * chain: each refresh replaces the token, and using a replaced one after the grace period revokes them all.
 */
export const oauthRefreshTokens = pgTable(
  'oauth_refresh_tokens',
  {
    id: ownedIdColumn(),
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
    accountKey('oauth_refresh_tokens', t),
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

/**
 * Where a delivery stands: `pending` (its first attempt, or a replay's, is due), `retrying` (an attempt failed,
 * the next is scheduled), `succeeded` (a 2xx), `dead` (the retry schedule ran out), `dropped` (the app lost its
 * webhook_url, its grant or its secret: it is told nothing more).
 */
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'retrying', 'succeeded', 'dead', 'dropped'] as const
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number]

/** One attempt, as the app's developer sees it: when, the answer's status (none: no answer), how long, why not. */
export interface WebhookAttempt {
  at: string
  status_code: number | null
  duration_ms: number
  error: string | null
}

/**
 * One notification to one app, written in the change's transaction before any call: its id is the
 * `webhook-id` (`msg_<id>`) of every attempt, so that a receiver can drop a redelivery. The account's row:
 * it holds the account's data (`notification`), removed and exported with the account.
 */
export const oauthWebhookDeliveries = pgTable(
  'oauth_webhook_deliveries',
  {
    id: ownedIdColumn(),
    clientId: text('client_id').notNull(),
    accountId: accountIdColumn(),
    event: text('event').notNull(),
    /** The body sent, the spec's `{ event, data, account_id, timestamp }`. */
    notification: jsonb('notification').$type<object>().notNull(),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
    /** Every attempt, oldest first, replays' too. */
    attempts: jsonb('attempts').$type<WebhookAttempt[]>().notNull().default([]),
    /** Attempts since the delivery was queued or replayed: the place in the retry schedule. */
    seriesAttempts: integer('series_attempts').notNull().default(0),
    /** When the next attempt is due; while one is in flight, when its lease ends. Null once settled. */
    nextAttemptAt: timestampColumn('next_attempt_at').defaultNow(),
    /** Set while an instance sends it: the app's deliveries in flight are those leased. */
    leasedUntil: timestampColumn('leased_until'),
    droppedReason: text('dropped_reason'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('oauth_webhook_deliveries', t),
    idFormat('oauth_webhook_deliveries_id_format', t.id),
    // Retention's batches, across accounts by nature, found along the id (its time: platform/jobs/retention.ts).
    index('oauth_webhook_deliveries_id').on(t.id),
    check(
      'oauth_webhook_deliveries_status_valid',
      sql`${t.status} in ('pending', 'retrying', 'succeeded', 'dead', 'dropped')`,
    ),
    // The app's deliveries, newest first, all or of one status (the admin list).
    index('oauth_webhook_deliveries_client').on(t.clientId, t.id),
    index('oauth_webhook_deliveries_client_status').on(t.clientId, t.status, t.id),
    // The claim: the apps with deliveries waiting, each one's due first; only waiting rows are in it.
    index('oauth_webhook_deliveries_waiting')
      .on(t.clientId, t.nextAttemptAt)
      .where(sql`${t.status} in ('pending', 'retrying')`),
    // An app's deliveries in flight, counted against its bound at each claim.
    index('oauth_webhook_deliveries_leased')
      .on(t.clientId, t.leasedUntil)
      .where(sql`${t.leasedUntil} is not null`),
  ],
)
