import { sql } from 'drizzle-orm'
import {
  boolean,
  check,
  date,
  foreignKey,
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
  idFormat,
  ownedIdColumn,
  timestampColumn,
  updatedAt,
} from '../../platform/db/columns.js'
import {
  type BuilderComponents,
  FUNNEL_STATUSES,
  type LiveChatWidget,
  STEP_TYPES,
  type StepSeo,
  type StepTrackingCode,
} from './documents.schemas.js'

/** A custom domain funnels are served on. A hostname belongs to one account: unique across accounts. */
export const funnelDomains = pgTable(
  'funnel_domains',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    name: text('name').notNull(),
    sslEnabled: boolean('ssl_enabled').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('funnel_domains', t),
    idFormat('funnel_domains_id_format', t.id),
    uniqueIndex('funnel_domains_name_unique').on(sql`lower(${t.name})`),
    index('funnel_domains_account').on(t.accountId),
  ],
)

export const funnelTags = pgTable(
  'funnel_tags',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    name: text('name').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('funnel_tags', t),
    idFormat('funnel_tags_id_format', t.id),
    uniqueIndex('funnel_tags_account_name').on(t.accountId, sql`lower(${t.name})`),
  ],
)

/** The unique indexes that keep a base path to one live funnel per host (a domain, or the default host). */
export const DOMAIN_BASE_PATH_INDEX = 'funnels_account_domain_base_path'
export const DEFAULT_HOST_BASE_PATH_INDEX = 'funnels_default_host_base_path'

/**
 * The spec's Funnel. `base_path` is stored normalised (lower case, one leading slash, no trailing slash)
 * and is unique among live funnels of a domain; funnels without a domain share the account's default
 * host, so they are unique among that account's funnels without a domain.
 */
export const funnels = pgTable(
  'funnels',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    name: text('name').notNull(),
    domainId: text('domain_id'),
    basePath: text('base_path').notNull(),
    status: text('status', { enum: FUNNEL_STATUSES }).notNull().default('draft'),
    favicon: text('favicon'),
    headerTrackingCode: text('header_tracking_code'),
    footerTrackingCode: text('footer_tracking_code'),
    liveChatWidget: jsonb('live_chat_widget').$type<LiveChatWidget>(),
    /** Template category id; changing it needs the funnel-template admin permission. */
    category: text('category'),
    deleted: boolean('deleted').notNull().default(false),
    deletedAt: timestampColumn('deleted_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
    updatedBy: text('updated_by'),
  },
  (t) => [
    accountKey('funnels', t),
    idFormat('funnels_id_format', t.id),
    check('funnels_status_valid', sql`${t.status} in ('active', 'inactive', 'draft')`),
    // A deleted domain leaves its funnels on the default host: `ON DELETE SET NULL (domain_id)` (the SQL of
    // migration 0038; drizzle-kit cannot name the column), so that the account stays.
    foreignKey({
      name: 'funnels_domain_fk',
      columns: [t.accountId, t.domainId],
      foreignColumns: [funnelDomains.accountId, funnelDomains.id],
    }).onDelete('set null'),
    uniqueIndex(DOMAIN_BASE_PATH_INDEX)
      .on(t.accountId, t.domainId, t.basePath)
      .where(sql`not ${t.deleted} and ${t.domainId} is not null`),
    uniqueIndex(DEFAULT_HOST_BASE_PATH_INDEX)
      .on(t.accountId, t.basePath)
      .where(sql`not ${t.deleted} and ${t.domainId} is null`),
    index('funnels_account_updated').on(t.accountId, t.updatedAt),
    // A funnel found by its id alone, before its account is known: a public preview, a published page's form
    // post, the edge serving a funnel by id. Not unique: the key is (account_id, id).
    index('funnels_id').on(t.id),
  ],
)

export const funnelTagLinks = pgTable(
  'funnel_tag_links',
  {
    accountId: accountIdColumn(),
    funnelId: text('funnel_id').notNull(),
    tagId: text('tag_id').notNull(),
  },
  (t) => [
    primaryKey({ name: 'funnel_tag_links_pkey', columns: [t.accountId, t.funnelId, t.tagId] }),
    foreignKey({
      name: 'funnel_tag_links_funnel_fk',
      columns: [t.accountId, t.funnelId],
      foreignColumns: [funnels.accountId, funnels.id],
    }).onDelete('cascade'),
    foreignKey({
      name: 'funnel_tag_links_tag_fk',
      columns: [t.accountId, t.tagId],
      foreignColumns: [funnelTags.accountId, funnelTags.id],
    }).onDelete('cascade'),
    index('funnel_tag_links_account_tag').on(t.accountId, t.tagId),
  ],
)

/**
 * The spec's funnel step. `path` is stored normalised like a funnel's base path, unique within its
 * funnel. `checksum` is the hash of `html` as the edge last synced it (the state table's "Step HTML sync").
 */
export const funnelSteps = pgTable(
  'funnel_steps',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    funnelId: text('funnel_id').notNull(),
    name: text('name').notNull(),
    path: text('path').notNull(),
    type: text('type', { enum: STEP_TYPES }).notNull().default('page'),
    order: integer('order').notNull(),
    html: text('html'),
    seo: jsonb('seo').$type<StepSeo>().notNull().default({}),
    trackingCode: jsonb('tracking_code').$type<StepTrackingCode>().notNull().default({}),
    css: text('css'),
    externalFonts: jsonb('external_fonts').$type<string[]>().notNull().default([]),
    checksum: text('checksum'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('funnel_steps', t),
    idFormat('funnel_steps_id_format', t.id),
    check('funnel_steps_type_valid', sql`${t.type} in ('page', 'redirect')`),
    foreignKey({
      name: 'funnel_steps_funnel_fk',
      columns: [t.accountId, t.funnelId],
      foreignColumns: [funnels.accountId, funnels.id],
    }).onDelete('cascade'),
    uniqueIndex('funnel_steps_account_funnel_path').on(t.accountId, t.funnelId, t.path),
    index('funnel_steps_funnel_order').on(t.funnelId, t.order),
    // A step found by its id alone: the edge worker syncs a step's HTML by the step id, for every account.
    index('funnel_steps_id').on(t.id),
  ],
)

/** The current builder components of a step (one row per step). */
export const funnelStepComponents = pgTable(
  'funnel_step_components',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    stepId: text('step_id').notNull(),
    funnelId: text('funnel_id').notNull(),
    components: jsonb('components').$type<BuilderComponents>().notNull(),
    checksum: text('checksum'),
    savedAt: timestampColumn('saved_at').notNull().defaultNow(),
  },
  (t) => [
    accountKey('funnel_step_components', t),
    idFormat('funnel_step_components_id_format', t.id),
    foreignKey({
      name: 'funnel_step_components_step_fk',
      columns: [t.accountId, t.stepId],
      foreignColumns: [funnelSteps.accountId, funnelSteps.id],
    }).onDelete('cascade'),
    uniqueIndex('funnel_step_components_account_step').on(t.accountId, t.stepId),
  ],
)

/** Earlier versions of a step's components; only the last 10 per step are kept. */
export const funnelStepBackups = pgTable(
  'funnel_step_backups',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    stepId: text('step_id').notNull(),
    funnelId: text('funnel_id').notNull(),
    backupDate: timestampColumn('backup_date').notNull().defaultNow(),
    description: text('description').notNull(),
    componentsChecksum: text('components_checksum').notNull(),
    components: jsonb('components').$type<BuilderComponents>().notNull(),
  },
  (t) => [
    accountKey('funnel_step_backups', t),
    idFormat('funnel_step_backups_id_format', t.id),
    foreignKey({
      name: 'funnel_step_backups_step_fk',
      columns: [t.accountId, t.stepId],
      foreignColumns: [funnelSteps.accountId, funnelSteps.id],
    }).onDelete('cascade'),
    index('funnel_step_backups_account_step_date').on(t.accountId, t.stepId, t.backupDate),
  ],
)

/**
 * What a published page's form sent. A step deleted later leaves its submissions (and their step id);
 * `contact_id` is the account's contact created or updated from the submission, when it had an email or phone.
 */
export const funnelFormSubmissions = pgTable(
  'funnel_form_submissions',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    funnelId: text('funnel_id').notNull(),
    stepId: text('step_id').notNull(),
    formId: text('form_id').notNull(),
    fields: jsonb('fields').$type<Record<string, string>>().notNull(),
    visitorId: text('visitor_id'),
    ipAddress: text('ip_address'),
    userAgent: text('user_agent'),
    contactId: text('contact_id'),
    submittedAt: timestampColumn('submitted_at').notNull().defaultNow(),
  },
  (t) => [
    accountKey('funnel_form_submissions', t),
    idFormat('funnel_form_submissions_id_format', t.id),
    index('funnel_form_submissions_funnel_time').on(t.accountId, t.funnelId, t.submittedAt, t.id),
    foreignKey({
      name: 'funnel_form_submissions_funnel_fk',
      columns: [t.accountId, t.funnelId],
      foreignColumns: [funnels.accountId, funnels.id],
    }).onDelete('cascade'),
  ],
)

/** A short link to a funnel: a 6-character code over 62 characters, unique by key. */
export const funnelShortLinks = pgTable(
  'funnel_short_links',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    funnelId: text('funnel_id').notNull(),
    code: text('code').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('funnel_short_links', t),
    idFormat('funnel_short_links_id_format', t.id),
    check('funnel_short_links_code_format', sql`${t.code} ~ '^[0-9A-Za-z]{6}$'`),
    uniqueIndex('funnel_short_links_code').on(t.code),
    index('funnel_short_links_funnel').on(t.accountId, t.funnelId),
    foreignKey({
      name: 'funnel_short_links_funnel_fk',
      columns: [t.accountId, t.funnelId],
      foreignColumns: [funnels.accountId, funnels.id],
    }).onDelete('cascade'),
  ],
)

/** One click on a short link; bots and repeat clicks (same visitor within an hour) are kept apart. */
export const funnelShortLinkClicks = pgTable(
  'funnel_short_link_clicks',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    linkId: text('link_id').notNull(),
    clickedAt: timestampColumn('clicked_at').notNull().defaultNow(),
    referrer: text('referrer'),
    userAgent: text('user_agent'),
    /** A salted hash of the visitor (IP and user agent), never the IP itself. */
    visitorHash: text('visitor_hash').notNull(),
    isBot: boolean('is_bot').notNull(),
    isRepeat: boolean('is_repeat').notNull(),
  },
  (t) => [
    accountKey('funnel_short_link_clicks', t),
    idFormat('funnel_short_link_clicks_id_format', t.id),
    foreignKey({
      name: 'funnel_short_link_clicks_link_fk',
      columns: [t.accountId, t.linkId],
      foreignColumns: [funnelShortLinks.accountId, funnelShortLinks.id],
    }).onDelete('cascade'),
    // Retention's batches, across accounts by nature, found along the id (its time: platform/jobs/retention.ts).
    index('funnel_short_link_clicks_id').on(t.id),
    index('funnel_short_link_clicks_account_link_time').on(t.accountId, t.linkId, t.clickedAt),
  ],
)

/**
 * The daily roll-up of a link's clicks that its statistics read: every click, people's first in an hour
 * (`unique_clicks`) and bots', per UTC day. Written by the statement that stores the click, so it holds
 * every click ever made while raw clicks are kept only for a retention period.
 */
export const funnelShortLinkDailyClicks = pgTable(
  'funnel_short_link_daily_clicks',
  {
    accountId: accountIdColumn(),
    linkId: text('link_id').notNull(),
    day: date('day', { mode: 'string' }).notNull(),
    clicks: integer('clicks').notNull(),
    uniqueClicks: integer('unique_clicks').notNull(),
    bots: integer('bots').notNull(),
  },
  (t) => [
    primaryKey({ name: 'funnel_short_link_daily_clicks_pk', columns: [t.accountId, t.linkId, t.day] }),
    foreignKey({
      name: 'funnel_short_link_daily_clicks_link_fk',
      columns: [t.accountId, t.linkId],
      foreignColumns: [funnelShortLinks.accountId, funnelShortLinks.id],
    }).onDelete('cascade'),
  ],
)
