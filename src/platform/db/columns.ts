import { sql } from 'drizzle-orm'
import type { AnyPgColumn, PgColumn } from 'drizzle-orm/pg-core'
import { check, primaryKey, text, timestamp } from 'drizzle-orm/pg-core'
import { newId } from './ids.js'

/** Primary key column: a 24-character hex id generated in one place. */
export const idColumn = () => text('id').primaryKey().$defaultFn(newId)

/**
 * The id of an account-owned row: generated as `idColumn`'s, and keyed with its account (`accountKey`), so
 * that the table can be distributed by account (ARCHITECTURE.md).
 */
export const ownedIdColumn = () => text('id').notNull().$defaultFn(newId)

/**
 * The primary key of an account-owned table, `(account_id, id)`, under the name PostgreSQL gives a table's
 * own (`<table>_pkey`), which it had when it was `(id)`.
 */
export const accountKey = (table: string, t: { accountId: PgColumn; id: PgColumn }) =>
  primaryKey({ name: `${table}_pkey`, columns: [t.accountId, t.id] })

/** Check constraint keeping an id column to the 24-hex format. */
export const idFormat = (name: string, column: AnyPgColumn) => check(name, sql`${column} ~ '^[0-9a-f]{24}$'`)

/** The account a row belongs to: every account-owned row carries it, child rows too (ARCHITECTURE.md). */
export const accountIdColumn = () => text('account_id').notNull()

/** A point in time: `timestamptz`, read as a Date. */
export const timestampColumn = (name: string) => timestamp(name, { withTimezone: true, mode: 'date' })

export const createdAt = () => timestampColumn('created_at').notNull().defaultNow()
export const updatedAt = (name = 'updated_at') =>
  timestampColumn(name)
    .notNull()
    .defaultNow()
    .$onUpdateFn(() => new Date())

/**
 * A timestamp as the API writes it, in `Date#toISOString`'s format (UTC, milliseconds), formatted by
 * PostgreSQL: for rows read raw, where parsing PostgreSQL's own text in JavaScript was about a tenth of
 * the time a room list spent in Node.
 */
export const isoTimestamp = (column: AnyPgColumn) =>
  sql<string>`to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
