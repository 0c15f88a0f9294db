import { index, pgTable, text } from 'drizzle-orm/pg-core'
import { createdAt, timestampColumn } from '../../platform/db/columns.js'

/**
 * The outbox pages' sessions, kept on the server so that signing out ends one at once on every instance.
 * Only a keyed hash of the session id is kept: the id itself lives in the browser's cookie.
 */
export const outboxSessions = pgTable(
  'outbox_sessions',
  {
    /** HMAC-SHA256 of the session id keyed by ADMIN_TOKEN, in hex: a new token ends every session. */
    sessionHash: text('session_hash').primaryKey(),
    expiresAt: timestampColumn('expires_at').notNull(),
    createdAt: createdAt(),
  },
  // Expired sessions are deleted at each sign-in, by this index.
  (t) => [index('outbox_sessions_expires_at').on(t.expiresAt)],
)
