import { sql } from 'drizzle-orm'
import { check, index, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core'
import { createdAt, idColumn, idFormat } from '../../platform/db/columns.js'

export const DND_TYPES = ['permanent', 'temporary'] as const

/** The account's do-not-disturb list: addresses no email may be sent to. */
export const doNotDisturbEntries = pgTable(
  'do_not_disturb_entries',
  {
    id: idColumn(),
    accountId: text('account_id').notNull(),
    value: text('value').notNull(),
    type: text('type', { enum: DND_TYPES }).notNull(),
    reason: text('reason').notNull().default(''),
    createdAt: createdAt(),
  },
  (t) => [
    idFormat('do_not_disturb_entries_id_format', t.id),
    check('do_not_disturb_entries_type_valid', sql`${t.type} in ('permanent', 'temporary')`),
    uniqueIndex('do_not_disturb_entries_account_value').on(t.accountId, sql`lower(${t.value})`),
    index('do_not_disturb_entries_account_created').on(t.accountId, t.createdAt),
  ],
)
