import { sql } from 'drizzle-orm'
import {
  type AnyPgColumn,
  boolean,
  check,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import { createdAt, idColumn, idFormat, updatedAt } from '../../platform/db/columns.js'

export const ACCOUNT_STATUSES = ['active', 'suspended'] as const
export const ACCOUNT_TIERS = ['basic', 'pro', 'enterprise'] as const

export const accounts = pgTable(
  'accounts',
  {
    id: idColumn(),
    name: text('name').notNull(),
    parentAccount: text('parent_account').references((): AnyPgColumn => accounts.id),
    status: text('status', { enum: ACCOUNT_STATUSES }).notNull().default('active'),
    tier: text('tier', { enum: ACCOUNT_TIERS }).notNull().default('basic'),
    // The spec's `listings.entity`: empty string means the listings link is not initialized.
    listingsEntity: text('listings_entity').notNull().default(''),
    listingsStatus: boolean('listings_status').notNull().default(false),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('accounts_id_format', t.id),
    check('accounts_status_valid', sql`${t.status} in ('active', 'suspended')`),
    index('accounts_parent_idx').on(t.parentAccount),
  ],
)

export const users = pgTable(
  'users',
  {
    id: idColumn(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    firstName: text('first_name').notNull().default(''),
    lastName: text('last_name').notNull().default(''),
    phone: text('phone').notNull().default(''),
    image: text('image').notNull().default(''),
    passwordHash: text('password_hash').notNull(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('users_id_format', t.id), uniqueIndex('users_email_unique').on(sql`lower(${t.email})`)],
)

export const memberships = pgTable(
  'memberships',
  {
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    main: boolean('main').notNull().default(false),
    createdAt: createdAt(),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.userId] }),
    index('memberships_user_idx').on(t.userId),
    uniqueIndex('memberships_one_main_per_user').on(t.userId).where(sql`${t.main}`),
  ],
)

/** A user's chat identity in an account: its id is `conversation.id` in tokens and a room member id. */
export const chatIdentities = pgTable(
  'chat_identities',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [
    idFormat('chat_identities_id_format', t.id),
    uniqueIndex('chat_identities_account_user').on(t.accountId, t.userId),
  ],
)

export const contacts = pgTable(
  'contacts',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    email: text('email'),
    name: text('name').notNull().default(''),
    phone: text('phone').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('contacts_id_format', t.id),
    uniqueIndex('contacts_account_email_unique')
      .on(t.accountId, sql`lower(${t.email})`)
      .where(sql`${t.email} is not null`),
  ],
)

/** A thread with a contact (the spec's prospect "conversation"), not to be confused with chat identities. */
export const prospectConversations = pgTable(
  'prospect_conversations',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    contactId: text('contact_id')
      .notNull()
      .references(() => contacts.id),
    channel: text('channel').notNull(),
    title: text('title').notNull().default(''),
    isOpen: boolean('is_open').notNull().default(true),
    lastActivity: timestamp('last_activity', { withTimezone: true, mode: 'date' }).notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('prospect_conversations_id_format', t.id),
    index('prospect_conversations_contact_idx').on(t.accountId, t.contactId, t.channel),
  ],
)

export const prospectConversationMembers = pgTable(
  'prospect_conversation_members',
  {
    accountId: text('account_id').notNull(),
    conversationId: text('conversation_id')
      .notNull()
      .references(() => prospectConversations.id, { onDelete: 'cascade' }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    unreadCount: integer('unread_count').notNull().default(0),
  },
  (t) => [primaryKey({ columns: [t.accountId, t.conversationId, t.userId] })],
)

/** The records email variables read: `{{person.*}}`, `{{business.*}}`, `{{instasite.*}}`, `{{instareport.*}}`. */
export const persons = pgTable(
  'persons',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    firstName: text('first_name').notNull().default(''),
    lastName: text('last_name').notNull().default(''),
    email: text('email').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('persons_id_format', t.id), index('persons_account_idx').on(t.accountId)],
)

export const businesses = pgTable(
  'businesses',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    name: text('name').notNull(),
    address: text('address').notNull().default(''),
    phone: text('phone').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('businesses_id_format', t.id), index('businesses_account_idx').on(t.accountId)],
)

export const instasites = pgTable(
  'instasites',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    url: text('url').notNull(),
    name: text('name').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('instasites_id_format', t.id), index('instasites_account_idx').on(t.accountId)],
)

export const instareports = pgTable(
  'instareports',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    url: text('url').notNull(),
    link: text('link').notNull().default(''),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('instareports_id_format', t.id), index('instareports_account_idx').on(t.accountId)],
)

export const creditBalances = pgTable(
  'credit_balances',
  {
    accountId: text('account_id')
      .primaryKey()
      .references(() => accounts.id),
    balance: integer('balance').notNull().default(0),
    updatedAt: updatedAt(),
  },
  (t) => [check('credit_balances_not_negative', sql`${t.balance} >= 0`)],
)

/** Every change of a balance: grants are positive, reservations negative. */
export const creditLedger = pgTable(
  'credit_ledger',
  {
    id: idColumn(),
    accountId: text('account_id')
      .notNull()
      .references(() => accounts.id),
    event: text('event').notNull(),
    quantity: integer('quantity').notNull(),
    reference: text('reference'),
    createdAt: createdAt(),
  },
  (t) => [
    idFormat('credit_ledger_id_format', t.id),
    index('credit_ledger_account_idx').on(t.accountId, t.createdAt),
    // A retried reservation or grant with the same reference is applied once.
    uniqueIndex('credit_ledger_reference_unique')
      .on(t.accountId, t.event, t.reference)
      .where(sql`${t.reference} is not null`),
  ],
)
