import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  check,
  foreignKey,
  index,
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

export const DND_TYPES = ['permanent', 'temporary'] as const

/** The account's do-not-disturb list: addresses no email may be sent to. */
export const doNotDisturbEntries = pgTable(
  'do_not_disturb_entries',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    value: text('value').notNull(),
    type: text('type', { enum: DND_TYPES }).notNull(),
    reason: text('reason').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('do_not_disturb_entries', t),
    idFormat('do_not_disturb_entries_id_format', t.id),
    check('do_not_disturb_entries_type_valid', sql`${t.type} in ('permanent', 'temporary')`),
    uniqueIndex('do_not_disturb_entries_account_value').on(t.accountId, sql`lower(${t.value})`),
    index('do_not_disturb_entries_account_created').on(t.accountId, t.createdAt),
  ],
)

export const COMMUNICATION_TYPES = ['OUTGOING', 'INCOMING'] as const

/** The `module` tag of records: the provider's name in upper case. */
export const MODULE_TAGS = { sendgrid: 'SENDGRID', outbox: 'OUTBOX' } as const

export interface AttachmentMetadata {
  bucket: string
  type: string
  file_name: string
  size: number
  key: string
}

export interface SentBy {
  name: string
  email: string
  first_name: string
  last_name: string
  phone: string
  image: string
}

/** The spec's Communication record: one email sent or received. */
export const communications = pgTable(
  'communications',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    type: text('type', { enum: COMMUNICATION_TYPES }).notNull(),
    /** The provider tag in upper case (`SENDGRID`, `OUTBOX`); inbound threading filters on it. */
    module: text('module').notNull(),
    messageType: text('message_type').notNull().default('EMAIL'),
    origin: text('origin').notNull().default(''),
    sentBy: jsonb('sent_by').$type<SentBy | null>(),
    headers: jsonb('headers').$type<Record<string, string>>().notNull().default({}),
    body: jsonb('body').$type<Record<string, unknown>>().notNull().default({}),
    msgId: text('msg_id'),
    contactIds: text('contact_ids').array().notNull().default(sql`'{}'::text[]`),
    conversationIds: text('conversation_ids').array().notNull().default(sql`'{}'::text[]`),
    attachments: jsonb('attachments').$type<AttachmentMetadata[]>().notNull().default([]),
    success: boolean('success').notNull(),
    fromAddress: text('from_address'),
    toAddresses: text('to_addresses').array(),
    subject: text('subject'),
    html: text('html'),
    text: text('text'),
    referenceId: text('reference_id'),
    createdAt: createdAt(),
    modifiedAt: updatedAt('modified_at'),
  },
  (t) => [
    accountKey('communications', t),
    idFormat('communications_id_format', t.id),
    check('communications_type_valid', sql`${t.type} in ('OUTGOING', 'INCOMING')`),
    // The account's records newest first, by page or by keyset on (created_at, id).
    index('communications_account_created').on(t.accountId, t.createdAt, t.id),
    // A contact's (or a conversation's) records: GIN over the account (btree_gin) and the id arrays, so the
    // list follows the contact's few records instead of walking the account's.
    index('communications_account_contacts').using('gin', t.accountId, t.contactIds, t.conversationIds),
    // The operator's outbox: every account's sent mail, newest first (the one list across accounts).
    index('communications_outgoing_created').on(t.createdAt, t.id).where(sql`${t.type} = 'OUTGOING'`),
    // The operator's outbox of one account: its page, and its capped total counted index-only. Without it,
    // PostgreSQL counted the largest account's 10,001 sent mails by reading the table (12 ms).
    index('communications_account_outgoing_created')
      .on(t.accountId, t.createdAt, t.id)
      .where(sql`${t.type} = 'OUTGOING'`),
    // Webhooks arrive without an account: delivery events and replies find their record by message id.
    index('communications_module_msg_id').on(t.module, t.msgId),
    // A redelivered reply (same Message-ID) is stored once per account.
    uniqueIndex('communications_account_inbound_msg_id')
      .on(t.accountId, t.module, t.msgId)
      .where(sql`${t.type} = 'INCOMING'`),
  ],
)

/** Delivery events of a communication (the record's `events`), once per SendGrid event id. */
export const communicationEvents = pgTable(
  'communication_events',
  {
    accountId: accountIdColumn(),
    /** Null for an event whose message is unknown but whose account came in its custom args. */
    communicationId: text('communication_id'),
    sgEventId: text('sg_event_id').notNull(),
    event: text('event').notNull(),
    email: text('email').notNull().default(''),
    timestamp: bigint('timestamp', { mode: 'number' }).notNull(),
    sgMessageId: text('sg_message_id'),
    uid: text('uid'),
    useragent: text('useragent'),
    ip: text('ip'),
    url: text('url'),
    /** SendGrid's `type` on a bounce: `bounce` (hard) or `blocked` (soft). */
    bounceType: text('bounce_type'),
    createdAt: createdAt(),
  },
  (t) => [
    // SendGrid's own event id is the key: no surrogate id to generate, check and index on this hot insert.
    primaryKey({ name: 'communication_events_pkey', columns: [t.accountId, t.sgEventId] }),
    index('communication_events_communication').on(t.accountId, t.communicationId, t.timestamp),
    foreignKey({
      name: 'communication_events_communication_fk',
      columns: [t.accountId, t.communicationId],
      foreignColumns: [communications.accountId, communications.id],
    }).onDelete('cascade'),
  ],
)

/**
 * Delivery-event batches as SendGrid posted them, stored before the webhook answers and processed by a
 * job. Not account-scoped: a batch mixes accounts, and its events are split by account when processed.
 */
export const mailEventBatches = pgTable('mail_event_batches', {
  id: idColumn(),
  payload: jsonb('payload').$type<unknown[]>().notNull(),
  receivedAt: timestampColumn('received_at').notNull().defaultNow(),
  processedAt: timestampColumn('processed_at'),
})

/** The SendGrid subuser an account sends through; the API key is encrypted at rest. */
export const mailSubusers = pgTable('mail_subusers', {
  accountId: text('account_id').primaryKey(),
  username: text('username').notNull(),
  apiKeyEncrypted: text('api_key_encrypted').notNull(),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

/**
 * Keys of sends that happen once: the send endpoint's `Idempotency-Key`s and the review requests' emails. A
 * key names one send of its account. It is claimed before anything is charged or sent, with the id the
 * communication will have (which SendGrid is asked for should the claiming process die), and is marked
 * recorded with the communication (`platform/db/key-claims.ts`).
 */
export const emailSendKeys = pgTable(
  'email_send_keys',
  {
    accountId: accountIdColumn(),
    key: text('key').notNull(),
    /** The communication of the send; null only on claims from before it was chosen with the claim. */
    communicationId: text('communication_id'),
    claimedAt: timestampColumn('claimed_at').notNull().defaultNow(),
    /** Null while the send is under way. */
    recordedAt: timestampColumn('recorded_at'),
  },
  (t) => [primaryKey({ name: 'email_send_keys_pkey', columns: [t.accountId, t.key] })],
)
