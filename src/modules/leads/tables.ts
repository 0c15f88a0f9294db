import { sql } from 'drizzle-orm'
import {
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  pgTable,
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

/** The spec's lead campaign `integration`. */
export const SOCIALNET_ADS = 'socialnet_ads'
/** The spec's token record `source` of the lead ads connection. */
export const SOCIALNET_LEADS = 'socialnet-leads'

export const TOKEN_STATUSES = ['valid', 'invalid'] as const
/**
 * A campaign's page subscription as the last check found it: `unknown` before any, `subscribed`,
 * `resubscribed` (Meta had dropped our app and the check subscribed it again), `unsubscribed` (dropped,
 * and subscribing again failed; `subscription_error` says why).
 */
export const SUBSCRIPTION_STATUSES = ['unknown', 'subscribed', 'resubscribed', 'unsubscribed'] as const
/**
 * A lead's state: `received` (stored, its capture queued), `captured` (a contact holds it), `failed`
 * (with its reason; captured again by a new token or the sync), `unclaimed` (no live campaign claims its
 * page and form; a campaign created later picks it up through its sync).
 */
export const LEAD_STATUSES = ['received', 'captured', 'failed', 'unclaimed'] as const
/** How a lead reached us: Meta's webhook, or the reconciliation sync reading the form's leads. */
export const LEAD_SOURCES = ['webhook', 'sync'] as const

/** The spec's token record: the account's connected Meta user token, sealed with SECRETS_ENCRYPTION_KEY. */
export const socialnetTokens = pgTable(
  'socialnet_tokens',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    createdBy: text('created_by'),
    source: text('source').notNull(),
    accessToken: text('access_token').notNull(),
    tokenType: text('token_type').notNull().default('bearer'),
    expiresIn: integer('expires_in').notNull(),
    /** When the token stops working: `created` + `expires_in`; null when Meta gave no expiry (0). */
    expiresAt: timestampColumn('expires_at'),
    status: text('status', { enum: TOKEN_STATUSES }).notNull().default('valid'),
    invalidReason: text('invalid_reason'),
    invalidAt: timestampColumn('invalid_at'),
    /** The spec's `deleted`: set on disconnect; the record is kept. */
    deleted: timestampColumn('deleted'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('socialnet_tokens', t),
    idFormat('socialnet_tokens_id_format', t.id),
    uniqueIndex('socialnet_tokens_account_source_live')
      .on(t.accountId, t.source)
      .where(sql`${t.deleted} is null`),
  ],
)

/** The spec's lead campaign: which page and form's leads become this account's contacts. */
export const leadCampaigns = pgTable(
  'lead_campaigns',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    integration: text('integration').notNull().default(SOCIALNET_ADS),
    pageId: text('page_id').notNull(),
    formId: text('form_id').notNull(),
    isDeleted: boolean('is_deleted').notNull().default(false),
    /** The page's access token last obtained from the account's token, sealed; fetched again on 190. */
    pageAccessToken: text('page_access_token'),
    subscriptionStatus: text('subscription_status', { enum: SUBSCRIPTION_STATUSES })
      .notNull()
      .default('unknown'),
    subscriptionError: text('subscription_error'),
    subscriptionCheckedAt: timestampColumn('subscription_checked_at'),
    /** Held by the one sync running for the campaign, across instances; a crashed run's hold expires. */
    syncStartedAt: timestampColumn('sync_started_at'),
    syncedAt: timestampColumn('synced_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('lead_campaigns', t),
    idFormat('lead_campaigns_id_format', t.id),
    // A page and form belong to one live campaign across all accounts: each lead maps to one account.
    uniqueIndex('lead_campaigns_page_form_live').on(t.pageId, t.formId).where(sql`not ${t.isDeleted}`),
    index('lead_campaigns_account_created').on(t.accountId, t.createdAt),
  ],
)

/** The spec's webhook registration, one per campaign: the page subscribed and our callback registered. */
export const leadWebhookRegistrations = pgTable(
  'lead_webhook_registrations',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    /** The user who registered it. */
    owner: text('owner').notNull(),
    campaignId: text('campaign_id').notNull(),
    pageId: text('page_id').notNull(),
    webhookUrl: text('webhook_url').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('lead_webhook_registrations', t),
    idFormat('lead_webhook_registrations_id_format', t.id),
    uniqueIndex('lead_webhook_registrations_campaign').on(t.accountId, t.campaignId),
    foreignKey({
      name: 'lead_webhook_registrations_campaign_fk',
      columns: [t.accountId, t.campaignId],
      foreignColumns: [leadCampaigns.accountId, leadCampaigns.id],
    }),
  ],
)

/** A lead event as Meta posted it (verified), kept before Meta is answered; a job files its changes. */
export const leadWebhookEvents = pgTable(
  'lead_webhook_events',
  {
    id: idColumn(),
    payload: jsonb('payload').notNull(),
    processedAt: timestampColumn('processed_at'),
    receivedAt: createdAt(),
  },
  (t) => [
    idFormat('lead_webhook_events_id_format', t.id),
    index('lead_webhook_events_unprocessed').on(t.receivedAt).where(sql`${t.processedAt} is null`),
  ],
)

/**
 * One lead per `leadgen_id` (the unique key that makes capture exactly-once under redelivery, concurrent
 * deliveries and the sync). Claimed leads carry their campaign's account; an unclaimed one carries none
 * until a campaign picks it up.
 */
export const leads = pgTable(
  'leads',
  {
    id: idColumn(),
    leadgenId: text('leadgen_id').notNull(),
    pageId: text('page_id').notNull(),
    formId: text('form_id').notNull(),
    adId: text('ad_id'),
    adgroupId: text('adgroup_id'),
    accountId: text('account_id'),
    campaignId: text('campaign_id'),
    status: text('status', { enum: LEAD_STATUSES }).notNull(),
    reason: text('reason'),
    source: text('source', { enum: LEAD_SOURCES }).notNull(),
    createdTime: timestampColumn('created_time').notNull(),
    /** The provider's `field_data` exactly as received. */
    fieldData: jsonb('field_data'),
    /** The standard lead fields read from `field_data`. */
    fields: jsonb('fields').$type<Record<string, string>>(),
    contactId: text('contact_id'),
    attempts: integer('attempts').notNull().default(0),
    receivedAt: createdAt(),
    capturedAt: timestampColumn('captured_at'),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('leads_id_format', t.id),
    uniqueIndex('leads_leadgen_id').on(t.leadgenId),
    check(
      'leads_claimed_have_account',
      sql`${t.status} = 'unclaimed' or (${t.accountId} is not null and ${t.campaignId} is not null)`,
    ),
    index('leads_campaign_created').on(t.accountId, t.campaignId, t.createdTime, t.id),
    foreignKey({
      name: 'leads_campaign_fk',
      columns: [t.accountId, t.campaignId],
      foreignColumns: [leadCampaigns.accountId, leadCampaigns.id],
    }),
    index('leads_unclaimed_form').on(t.pageId, t.formId).where(sql`${t.status} = 'unclaimed'`),
    index('leads_account_failed').on(t.accountId, t.reason).where(sql`${t.status} = 'failed'`),
  ],
)
