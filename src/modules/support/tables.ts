import { sql } from 'drizzle-orm'
import { boolean, check, foreignKey, index, jsonb, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import {
  accountIdColumn,
  accountKey,
  createdAt,
  idFormat,
  ownedIdColumn,
  timestampColumn,
  updatedAt,
} from '../../platform/db/columns.js'

export const SUPPORT_MESSAGE_DIRECTIONS = ['INCOMING', 'OUTGOING'] as const

/** Where a support message's attachment lives in object storage; the bytes never enter the database. */
export interface SupportAttachment {
  bucket: string
  key: string
  type: string
  file_name: string
  size: number
}

/** A channel the account's support team receives messages through (e.g. `email_inbound`). */
export const supportInboxes = pgTable(
  'support_inboxes',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    type: text('type').notNull(),
    name: text('name').notNull(),
    isDefault: boolean('is_default').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('support_inboxes', t),
    idFormat('support_inboxes_id_format', t.id),
    // At most one default inbox per type, so "the account's default email inbox" is never ambiguous.
    uniqueIndex('support_inboxes_account_type_default').on(t.accountId, t.type).where(sql`${t.isDefault}`),
  ],
)

/** A support thread with one contact; replies join the contact's open conversation. */
export const supportConversations = pgTable(
  'support_conversations',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    contactId: text('contact_id').notNull(),
    subject: text('subject').notNull().default(''),
    isOpen: boolean('is_open').notNull().default(true),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('support_conversations', t),
    idFormat('support_conversations_id_format', t.id),
    // One open conversation per contact: concurrent replies of the same contact land in the same one.
    uniqueIndex('support_conversations_account_contact_open')
      .on(t.accountId, t.contactId)
      .where(sql`${t.isOpen}`),
  ],
)

/** The room agents and the contact talk in, one per conversation. */
export const supportRooms = pgTable(
  'support_rooms',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    conversationId: text('conversation_id').notNull(),
    inboxId: text('inbox_id'),
    /** Contact ids taking part. */
    participants: text('participants').array().notNull().default(sql`'{}'::text[]`),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('support_rooms', t),
    idFormat('support_rooms_id_format', t.id),
    uniqueIndex('support_rooms_account_conversation').on(t.accountId, t.conversationId),
    // A deleted inbox leaves its rooms: `ON DELETE SET NULL (inbox_id)` (the SQL of migration 0038; drizzle-kit
    // cannot name the column), so that the account stays.
    foreignKey({
      name: 'support_rooms_inbox_fk',
      columns: [t.accountId, t.inboxId],
      foreignColumns: [supportInboxes.accountId, supportInboxes.id],
    }).onDelete('set null'),

    foreignKey({
      name: 'support_rooms_conversation_fk',
      columns: [t.accountId, t.conversationId],
      foreignColumns: [supportConversations.accountId, supportConversations.id],
    }).onDelete('cascade'),
  ],
)

export const supportMessages = pgTable(
  'support_messages',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    roomId: text('room_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    direction: text('direction', { enum: SUPPORT_MESSAGE_DIRECTIONS }).notNull(),
    /** The email's html, else its text. */
    content: text('content').notNull().default(''),
    /** The email module's Communication record this message was made from. */
    communicationId: text('communication_id'),
    msgId: text('msg_id'),
    attachments: jsonb('attachments').$type<SupportAttachment[]>().notNull().default([]),
    createdAt: timestampColumn('created_at').notNull().defaultNow(),
  },
  (t) => [
    accountKey('support_messages', t),
    idFormat('support_messages_id_format', t.id),
    check('support_messages_direction_valid', sql`${t.direction} in ('INCOMING', 'OUTGOING')`),
    index('support_messages_account_room_created').on(t.accountId, t.roomId, t.createdAt),
    foreignKey({
      name: 'support_messages_room_fk',
      columns: [t.accountId, t.roomId],
      foreignColumns: [supportRooms.accountId, supportRooms.id],
    }).onDelete('cascade'),
    // An email becomes at most one support message, however often its reply is redelivered.
    uniqueIndex('support_messages_account_communication')
      .on(t.accountId, t.communicationId)
      .where(sql`${t.communicationId} is not null`),
  ],
)
