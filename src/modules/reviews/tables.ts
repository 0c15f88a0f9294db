import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  check,
  date,
  doublePrecision,
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
  idColumn,
  idFormat,
  ownedIdColumn,
  timestampColumn,
  updatedAt,
} from '../../platform/db/columns.js'
import {
  type FollowUp,
  REVIEW_PLATFORMS,
  type ReviewConditions,
  SEND_METHODS,
  type SendWindow,
  TEMPLATE_CHANNELS,
  TRIGGER_TYPES,
} from './documents.schemas.js'

/** A message a review request is sent with, by email or SMS. */
export const reviewTemplates = pgTable(
  'review_templates',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    name: text('name').notNull(),
    channel: text('channel', { enum: TEMPLATE_CHANNELS }).notNull(),
    subject: text('subject').notNull().default(''),
    body: text('body').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('review_templates', t),
    idFormat('review_templates_id_format', t.id),
    index('review_templates_account_created').on(t.accountId, t.createdAt),
  ],
)

/**
 * The spec's auto review request configuration: one per account (`PUT` upserts it). `parent_account` is the
 * spec's `parentAccount`, the caller's parent or else the account itself, stored with it.
 */
export const reviewConfigurations = pgTable(
  'review_configurations',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    parentAccount: text('parent_account').notNull(),
    name: text('name').notNull(),
    enabled: boolean('enabled').notNull(),
    trigger: text('trigger', { enum: TRIGGER_TYPES }).notNull(),
    delayHours: doublePrecision('delay_hours').notNull(),
    platforms: text('platforms', { enum: REVIEW_PLATFORMS }).array().notNull(),
    // A template in use by a configuration cannot be deleted (the key's default, no action: SQLSTATE 23503).
    templateId: text('template_id'),
    conditions: jsonb('conditions').$type<ReviewConditions>(),
    sendMethod: text('send_method', { enum: SEND_METHODS }).notNull(),
    fromEmail: text('from_email'),
    fromPhone: text('from_phone'),
    followUp: jsonb('follow_up').$type<FollowUp>(),
    sendWindow: jsonb('send_window').$type<SendWindow>(),
    timezone: text('timezone').notNull().default('UTC'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('review_configurations', t),
    idFormat('review_configurations_id_format', t.id),
    uniqueIndex('review_configurations_account').on(t.accountId),
    foreignKey({
      name: 'review_configurations_template_fk',
      columns: [t.accountId, t.templateId],
      foreignColumns: [reviewTemplates.accountId, reviewTemplates.id],
    }),

    check('review_configurations_delay_not_negative', sql`${t.delayHours} >= 0`),
  ],
)

/** Where an account's customers leave a review on each platform: one link per account and platform. */
export const reviewLinks = pgTable(
  'review_links',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    platform: text('platform', { enum: REVIEW_PLATFORMS }).notNull(),
    url: text('url').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('review_links', t),
    idFormat('review_links_id_format', t.id),
    uniqueIndex('review_links_account_platform').on(t.accountId, t.platform),
  ],
)

/**
 * Where a review event came from: Stripe (`paymentprovider`), Square (`orderprovider`), or the account's own
 * systems (`account`, `POST /reviews/events`, whose event ids are kept prefixed by the account's id).
 */
export const WEBHOOK_SOURCES = ['paymentprovider', 'orderprovider', 'account'] as const
export const WEBHOOK_EVENT_STATUSES = ['received', 'processed', 'skipped', 'failed'] as const

/**
 * Every event a review webhook received, kept before it is acknowledged and processed by a job. The
 * provider's event id is unique per source, so a repeated event is recognised. `account_id` is the account
 * the event is attributed to: named when it arrives (a payment's metadata, a claimed location, the reporting
 * account), or once applied; none, it is no account's yet. `trigger` is the one its kind reports (payments
 * and orders: `order_completed`; a refund or another kind: none). `reason_text` says `reason` in words, for
 * the account (`GET /reviews/events`).
 */
export const reviewWebhookEvents = pgTable(
  'review_webhook_events',
  {
    id: idColumn(),
    source: text('source', { enum: WEBHOOK_SOURCES }).notNull(),
    eventId: text('event_id').notNull(),
    type: text('type').notNull(),
    trigger: text('trigger', { enum: TRIGGER_TYPES }),
    accountId: text('account_id'),
    /** The customer the event is about, once processed: the account's order history (customer segments). */
    customerKey: text('customer_key'),
    payload: jsonb('payload').notNull(),
    status: text('status', { enum: WEBHOOK_EVENT_STATUSES }).notNull().default('received'),
    reason: text('reason'),
    reasonText: text('reason_text'),
    createdAt: createdAt(),
    processedAt: timestampColumn('processed_at'),
  },
  (t) => [
    idFormat('review_webhook_events_id_format', t.id),
    // The key of same-account references: deleting a row checks its children along their account-led indexes.
    uniqueIndex('review_webhook_events_account_id').on(t.accountId, t.id),
    uniqueIndex('review_webhook_events_source_event').on(t.source, t.eventId),
    index('review_webhook_events_status_created').on(t.status, t.createdAt, t.id),
    index('review_webhook_events_customer').on(t.accountId, t.customerKey, t.createdAt),
    // The account's events, newest first, and by trigger (GET /reviews/events, the configuration's warnings).
    index('review_webhook_events_account_created').on(t.accountId, t.createdAt, t.id),
    index('review_webhook_events_account_trigger').on(t.accountId, t.trigger, t.createdAt),
  ],
)

export const REQUEST_STATUSES = ['scheduled', 'sent', 'clicked', 'skipped', 'failed', 'cancelled'] as const

/**
 * The spec's review request (collection `review-requests`): one customer asked on one platform. The
 * `parent_account` groups an agency's accounts for the limit of one request per customer per platform per
 * 30 days; `customer_key` is the customer's lower-cased email, else their phone. `source_ref` names the
 * payment or order it came from: unique per platform, so a payment announced by two events schedules once,
 * and a refund cancels by it. `code` is its tracked link's.
 */
export const reviewRequests = pgTable(
  'review_requests',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    parentAccount: text('parent_account').notNull(),
    eventId: text('event_id').notNull(),
    sourceRef: text('source_ref').notNull(),
    customerKey: text('customer_key').notNull(),
    customerName: text('customer_name').notNull().default(''),
    customerEmail: text('customer_email'),
    customerPhone: text('customer_phone'),
    platform: text('platform', { enum: REVIEW_PLATFORMS }).notNull(),
    sendMethod: text('send_method', { enum: SEND_METHODS }).notNull(),
    status: text('status', { enum: REQUEST_STATUSES }).notNull().default('scheduled'),
    reason: text('reason'),
    orderValue: bigint('order_value', { mode: 'number' }),
    currency: text('currency'),
    code: text('code').notNull(),
    scheduledFor: timestampColumn('scheduled_for').notNull(),
    sentAt: timestampColumn('sent_at'),
    clickedAt: timestampColumn('clicked_at'),
    followUpSentAt: timestampColumn('follow_up_sent_at'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('review_requests', t),
    idFormat('review_requests_id_format', t.id),
    uniqueIndex('review_requests_code').on(t.code),
    uniqueIndex('review_requests_source_platform').on(t.accountId, t.sourceRef, t.platform),
    index('review_requests_account_created').on(t.accountId, t.createdAt, t.id),
    index('review_requests_limit').on(t.parentAccount, t.customerKey, t.platform, t.createdAt),
    // The requests an event scheduled (GET /reviews/events/:id).
    index('review_requests_account_event').on(t.accountId, t.eventId),
    // Checked at commit (DEFERRABLE INITIALLY DEFERRED, migration 0029): an event that named no account gets
    // it in the transaction that schedules its request, after the request.
    foreignKey({
      name: 'review_requests_event_fk',
      columns: [t.accountId, t.eventId],
      foreignColumns: [reviewWebhookEvents.accountId, reviewWebhookEvents.id],
    }),
  ],
)

/**
 * The daily roll-up `GET /reviews/stats` reads: the account's requests created on a UTC `day`, per platform,
 * status and (for skipped ones, the only reason the stats report) reason, with how many of them were sent and
 * clicked. Kept in the transaction of every write that creates a request or changes what it is counted as
 * (stats.repository.ts), so a year's statistics read a few hundred rows instead of every request.
 */
export const reviewRequestDailyCounts = pgTable(
  'review_request_daily_counts',
  {
    accountId: accountIdColumn(),
    day: date('day', { mode: 'string' }).notNull(),
    platform: text('platform', { enum: REVIEW_PLATFORMS }).notNull(),
    status: text('status', { enum: REQUEST_STATUSES }).notNull(),
    /** A skipped request's reason; empty for the other statuses. */
    reason: text('reason').notNull(),
    requests: integer('requests').notNull(),
    sent: integer('sent').notNull(),
    clicked: integer('clicked').notNull(),
  },
  (t) => [
    primaryKey({
      name: 'review_request_daily_counts_pk',
      columns: [t.accountId, t.day, t.platform, t.status, t.reason],
    }),
  ],
)

export const SMS_PROVIDERS = ['outbox', 'twilio'] as const

/** Every SMS a review request sent; with `SMS_PROVIDER=outbox` the message is only kept here. */
export const reviewSmsMessages = pgTable(
  'review_sms_messages',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    requestId: text('request_id').notNull(),
    to: text('to').notNull(),
    from: text('from'),
    body: text('body').notNull(),
    provider: text('provider', { enum: SMS_PROVIDERS }).notNull(),
    providerId: text('provider_id'),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('review_sms_messages', t),
    idFormat('review_sms_messages_id_format', t.id),
    index('review_sms_messages_account_created').on(t.accountId, t.createdAt, t.id),
    // The operator's outbox of every account's SMS, newest first.
    index('review_sms_messages_created').on(t.createdAt, t.id),
    foreignKey({
      name: 'review_sms_messages_request_fk',
      columns: [t.accountId, t.requestId],
      foreignColumns: [reviewRequests.accountId, reviewRequests.id],
    }),
    index('review_sms_messages_account_request').on(t.accountId, t.requestId),
    // An inbound STOP names the number it came from: the accounts that texted it are found by it.
    index('review_sms_messages_to').on(t.to),
  ],
)

/**
 * The review SMS that are sent once each: a request's text and its reminder's, keyed by the request. A key
 * is claimed before Twilio is called, with the id its `review_sms_messages` row will have, and is marked
 * recorded with that row (`platform/db/key-claims.ts`): a retry whose first attempt died asks Twilio whether
 * the text arrived before sending it again.
 */
export const reviewSmsSendKeys = pgTable(
  'review_sms_send_keys',
  {
    accountId: accountIdColumn(),
    key: text('key').notNull(),
    smsMessageId: text('sms_message_id').notNull(),
    claimedAt: timestampColumn('claimed_at').notNull().defaultNow(),
    recordedAt: timestampColumn('recorded_at'),
  },
  (t) => [primaryKey({ name: 'review_sms_send_keys_pkey', columns: [t.accountId, t.key] })],
)

/**
 * The Square locations an account claims: an order event is the account's whose location it names. A location
 * belongs to one account.
 */
export const reviewOrderLocations = pgTable(
  'review_order_locations',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    locationId: text('location_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('review_order_locations', t),
    idFormat('review_order_locations_id_format', t.id),
    uniqueIndex('review_order_locations_location').on(t.locationId),
    index('review_order_locations_account_created').on(t.accountId, t.createdAt),
  ],
)

/**
 * The phone numbers that replied STOP (or another of Twilio's opt-out keywords) to an account's review SMS:
 * its requests to them are skipped (`opted_out`) until they reply START. `phone` is the customer key's form
 * (digits and `+`).
 */
export const reviewSmsOptOuts = pgTable(
  'review_sms_opt_outs',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    phone: text('phone').notNull(),
    keyword: text('keyword').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('review_sms_opt_outs', t),
    idFormat('review_sms_opt_outs_id_format', t.id),
    uniqueIndex('review_sms_opt_outs_account_phone').on(t.accountId, t.phone),
  ],
)

/**
 * The payments an account's customers were refunded, by the reference their requests carry (`source_ref`):
 * kept whatever the configuration says, so that `exclude_refunded` holds at send time too, and for a refund
 * that arrives before its payment (Stripe does not promise the order of events).
 */
export const reviewRefunds = pgTable(
  'review_refunds',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    sourceRef: text('source_ref').notNull(),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('review_refunds', t),
    idFormat('review_refunds_id_format', t.id),
    uniqueIndex('review_refunds_account_source').on(t.accountId, t.sourceRef),
  ],
)
