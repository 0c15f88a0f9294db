import { sql } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import { check, text, timestamp } from 'drizzle-orm/pg-core'
import { newId } from './ids.js'

/** Primary key column: a 24-character hex id generated in one place. */
export const idColumn = () => text('id').primaryKey().$defaultFn(newId)

/** Check constraint keeping an id column to the 24-hex format. */
export const idFormat = (name: string, column: AnyPgColumn) => check(name, sql`${column} ~ '^[0-9a-f]{24}$'`)

export const createdAt = () =>
  timestamp('created_at', { withTimezone: true, mode: 'date' }).notNull().defaultNow()
export const updatedAt = (name = 'updated_at') =>
  timestamp(name, { withTimezone: true, mode: 'date' })
    .notNull()
    .defaultNow()
    .$onUpdateFn(() => new Date())
