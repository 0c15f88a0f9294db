import { type AnyColumn, sql } from 'drizzle-orm'
import {
  type AnyPgColumn,
  bigint,
  boolean,
  check,
  foreignKey,
  index,
  integer,
  jsonb,
  type PgColumnBuilderBase,
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
import { REMOVAL_STATUSES } from './account-removal.schemas.js'
import { ACCOUNT_STATUSES, ACCOUNT_TIERS } from './accounts.schemas.js'

/** A text column that is never null: empty when not given. */
const optionalText = (name: string) => text(name).notNull().default('')

/** An account's name as the account directory orders and searches it (its indexes are on this expression). */
export const accountDirectoryName = (name: AnyColumn) => sql`lower(${name}) collate "C"`

export const accounts = pgTable(
  'accounts',
  {
    id: idColumn(),
    name: text('name').notNull(),
    parentAccount: text('parent_account').references((): AnyPgColumn => accounts.id),
    status: text('status', { enum: ACCOUNT_STATUSES }).notNull().default('active'),
    tier: text('tier', { enum: ACCOUNT_TIERS }).notNull().default('basic'),
    // The spec's `listings.entity`: empty string means the listings link is not initialized.
    listingsEntity: optionalText('listings_entity'),
    listingsStatus: boolean('listings_status').notNull().default(false),
    // Requests the account may make in a budget window (ACCOUNT_REQUEST_BUDGET_WINDOW_SECONDS); null: the
    // service's ACCOUNT_REQUEST_BUDGET. Set by `PUT /v1/admin/accounts/:id/request-budget`.
    requestBudget: bigint('request_budget', { mode: 'number' }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('accounts_id_format', t.id),
    check('accounts_status_valid', sql`${t.status} in ('active', 'suspended', 'removed')`),
    index('accounts_parent_idx').on(t.parentAccount),
    // The operator's account directory (account-directory.*), ordered by name: lowercased in the "C"
    // collation, so that one index serves both the order and a name prefix (a range of it), after the
    // status or the parent when the list is of one (the parent's holds the sub-accounts only: a top-level
    // account has no parent to be listed by).
    index('accounts_directory_name').on(accountDirectoryName(t.name), t.id),
    index('accounts_directory_status_name').on(t.status, accountDirectoryName(t.name), t.id),
    index('accounts_directory_parent_name')
      .on(t.parentAccount, accountDirectoryName(t.name), t.id)
      .where(sql`${t.parentAccount} is not null`),
  ],
)

export const users = pgTable(
  'users',
  {
    id: idColumn(),
    email: text('email').notNull(),
    name: text('name').notNull(),
    firstName: optionalText('first_name'),
    lastName: optionalText('last_name'),
    phone: optionalText('phone'),
    image: optionalText('image'),
    passwordHash: text('password_hash').notNull(),
    /** Platform-wide permissions the operator grants (`funnel_templates:admin`), beyond account membership. */
    permissions: text('permissions').array().notNull().default(sql`'{}'::text[]`),
    /**
     * Set by the user's removal (user-admin.*): the row stays, emptied of the person's data, so that the
     * account's history keeps its chat identities and every token naming the user is refused as a
     * non-member's (a user this service does not hold would count as a member: account-access.ts).
     */
    removedAt: timestampColumn('removed_at'),
    /**
     * Set by a password reset (user-admin.*): the user's sessions start after it, so a platform JWT issued
     * in its second or before is refused (account-access.ts). Null: no reset ended them.
     */
    sessionsValidAfter: timestampColumn('sessions_valid_after'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [idFormat('users_id_format', t.id), uniqueIndex('users_email_unique').on(sql`lower(${t.email})`)],
)

export const memberships = pgTable(
  'memberships',
  {
    accountId: accountIdColumn().references(() => accounts.id),
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
    id: ownedIdColumn(),
    accountId: accountIdColumn().references(() => accounts.id),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('chat_identities', t),
    idFormat('chat_identities_id_format', t.id),
    uniqueIndex('chat_identities_account_user').on(t.accountId, t.userId),
  ],
)

export const contacts = pgTable(
  'contacts',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn().references(() => accounts.id),
    email: text('email'),
    name: optionalText('name'),
    phone: optionalText('phone'),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('contacts', t),
    idFormat('contacts_id_format', t.id),
    uniqueIndex('contacts_account_email_unique')
      .on(t.accountId, sql`lower(${t.email})`)
      .where(sql`${t.email} is not null`),
    // Search by a part of the name or email (ILIKE '%…%'): keys of the account's own, each three characters
    // of the lowercased name or email behind a hash of the account (`contact_search_keys`, migration 0032).
    // A search reads the postings of its account's keys only: no other account's contacts, and not the
    // account's every contact (docs/decisions.md, "Search keyed by the account").
    index('contacts_account_search_keys').using(
      'gin',
      sql`contact_search_keys(${t.accountId}, ${t.name}, ${t.email})`,
    ),
    // A term of one or two characters: keys of the account's own, each one and two characters of the
    // lowercased name or email (`contact_short_search_keys`, migration 0036), so that a short term found
    // nowhere is not looked for in every contact of the account (docs/decisions.md, "Searches whose cost
    // does not grow with the account").
    index('contacts_account_short_search_keys').using(
      'gin',
      sql`contact_short_search_keys(${t.accountId}, ${t.name}, ${t.email})`,
    ),
  ],
)

/** A thread with a contact (the spec's prospect "conversation"), not to be confused with chat identities. */
export const prospectConversations = pgTable(
  'prospect_conversations',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn().references(() => accounts.id),
    contactId: text('contact_id').notNull(),
    channel: text('channel').notNull(),
    title: optionalText('title'),
    isOpen: boolean('is_open').notNull().default(true),
    lastActivity: timestampColumn('last_activity').notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('prospect_conversations', t),
    idFormat('prospect_conversations_id_format', t.id),
    index('prospect_conversations_contact_idx').on(t.accountId, t.contactId, t.channel),
    foreignKey({
      name: 'prospect_conversations_contact_fk',
      columns: [t.accountId, t.contactId],
      foreignColumns: [contacts.accountId, contacts.id],
    }),
  ],
)

export const prospectConversationMembers = pgTable(
  'prospect_conversation_members',
  {
    accountId: accountIdColumn(),
    conversationId: text('conversation_id').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id),
    unreadCount: integer('unread_count').notNull().default(0),
  },
  (t) => [
    primaryKey({ columns: [t.accountId, t.conversationId, t.userId] }),
    foreignKey({
      name: 'prospect_conversation_members_conversation_fk',
      columns: [t.accountId, t.conversationId],
      foreignColumns: [prospectConversations.accountId, prospectConversations.id],
    }).onDelete('cascade'),
  ],
)

/** A record an account owns and email variables read: id, account, timestamps, and `columns`. */
function variableSourceTable<C extends Record<string, PgColumnBuilderBase>>(name: string, columns: C) {
  return pgTable(
    name,
    {
      id: ownedIdColumn(),
      accountId: accountIdColumn().references(() => accounts.id),
      ...columns,
      createdAt: createdAt(),
      updatedAt: updatedAt(),
    },
    (t) => [
      accountKey(name, t),
      idFormat(`${name}_id_format`, t.id),
      index(`${name}_account_idx`).on(t.accountId),
    ],
  )
}

/** The records email variables read: `{{person.*}}`, `{{business.*}}`, `{{instasite.*}}`, `{{instareport.*}}`. */
export const persons = variableSourceTable('persons', {
  firstName: optionalText('first_name'),
  lastName: optionalText('last_name'),
  email: optionalText('email'),
})

export const businesses = variableSourceTable('businesses', {
  name: text('name').notNull(),
  address: optionalText('address'),
  phone: optionalText('phone'),
})

export const instasites = variableSourceTable('instasites', {
  url: text('url').notNull(),
  name: optionalText('name'),
})

export const instareports = variableSourceTable('instareports', {
  url: text('url').notNull(),
  link: optionalText('link'),
})

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
    id: ownedIdColumn(),
    accountId: accountIdColumn().references(() => accounts.id),
    event: text('event').notNull(),
    quantity: integer('quantity').notNull(),
    reference: text('reference'),
    createdAt: createdAt(),
  },
  (t) => [
    accountKey('credit_ledger', t),
    idFormat('credit_ledger_id_format', t.id),
    index('credit_ledger_account_idx').on(t.accountId, t.createdAt),
    // A retried reservation or grant with the same reference is applied once.
    uniqueIndex('credit_ledger_reference_unique')
      .on(t.accountId, t.event, t.reference)
      .where(sql`${t.reference} is not null`),
  ],
)

/** What a removal has deleted of one table so far: rows counted batch by batch, `done` once none is left. */
export interface RemovalTableProgress {
  rows_deleted: number
  done: boolean
}

/**
 * One row per removed account (the root of the family removed), written by the removal's job. No foreign
 * key to `accounts`, no `account_id`: the record outlives the account's rows, and an account that is gone
 * is still answered as removed (account-access) through `account_ids`.
 */
export const accountRemovals = pgTable(
  'account_removals',
  {
    rootAccountId: text('root_account_id').primaryKey(),
    /** The account and every account below it when the removal was asked for, the root first. */
    accountIds: text('account_ids').array().notNull(),
    /**
     * Rows of tables without `account_id` that the removal takes, found when it was asked for (before the
     * memberships that reach them go): `{ users: [ids] }`, the users no other account holds.
     */
    reachedRows: jsonb('reached_rows').$type<Record<string, string[]>>().notNull(),
    status: text('status', { enum: REMOVAL_STATUSES }).notNull().default('queued'),
    /** Per table, what was deleted so far; committed with each batch, so a resumed job goes on from it. */
    progress: jsonb('progress').$type<Record<string, RemovalTableProgress>>().notNull().default({}),
    /** When the provider clean-up jobs were queued (once: the rows they read are deleted after). */
    providersQueuedAt: timestampColumn('providers_queued_at'),
    attempts: integer('attempts').notNull().default(0),
    lastError: text('last_error'),
    requestedAt: timestampColumn('requested_at').notNull().defaultNow(),
    startedAt: timestampColumn('started_at'),
    finishedAt: timestampColumn('finished_at'),
    updatedAt: updatedAt(),
  },
  (t) => [
    idFormat('account_removals_root_format', t.rootAccountId),
    check('account_removals_status_valid', sql`${t.status} in ('queued', 'running', 'done', 'failed')`),
    // An account's tokens are refused once its rows are gone: found by any id of the family.
    index('account_removals_account_ids').using('gin', t.accountIds),
  ],
)
