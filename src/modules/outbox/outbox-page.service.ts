import { createHmac, randomBytes } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import {
  deleteExpiredSessions,
  deleteSession,
  hasLiveSession,
  insertSession,
} from './outbox-page.repository.js'

/** How long a session made from the admin token lasts. */
export const SESSION_SECONDS = 12 * 3600

/** What a session cookie's value may be: the 32 random bytes of a session id in base64url. */
const SESSION_ID = /^[\w-]{43}$/

/** What is kept of a session id: its HMAC keyed by the admin token, so a new ADMIN_TOKEN ends every session. */
const sessionHash = (adminToken: string, sessionId: string) =>
  createHmac('sha256', adminToken).update(`admin-outbox-session:${sessionId}`).digest('hex')

/**
 * A new session: its random id, the cookie's whole value (never the token, nor an expiry a browser could
 * keep using), is kept hashed with its expiry; sessions expired by now are deleted on the way.
 */
export function newSession(db: Database, adminToken: string, now: Date): Promise<string> {
  const sessionId = randomBytes(32).toString('base64url')
  const expiresAt = new Date(now.getTime() + SESSION_SECONDS * 1000)
  return inTransaction(db, async (tx) => {
    await deleteExpiredSessions(tx, now)
    await insertSession(tx, sessionHash(adminToken, sessionId), expiresAt)
    return sessionId
  })
}

/** Whether the cookie's value is a session begun with this admin token, not ended and not expired. */
export async function isLiveSession(
  db: Database,
  adminToken: string,
  value: string | undefined,
  now: Date,
): Promise<boolean> {
  if (!value || !SESSION_ID.test(value)) return false
  return hasLiveSession(db, sessionHash(adminToken, value), now)
}

/** Signing out: the session ends for every instance at once, whoever still holds its cookie. */
export async function endSession(db: Database, adminToken: string, value: string | undefined): Promise<void> {
  if (value && SESSION_ID.test(value)) await deleteSession(db, sessionHash(adminToken, value))
}
