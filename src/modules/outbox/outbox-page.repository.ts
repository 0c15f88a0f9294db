import { and, eq, gt, lte } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { outboxSessions } from './tables.js'

export async function insertSession(db: Database, sessionHash: string, expiresAt: Date): Promise<void> {
  await db.insert(outboxSessions).values({ sessionHash, expiresAt })
}

export async function hasLiveSession(db: Database, sessionHash: string, now: Date): Promise<boolean> {
  const [row] = await db
    .select({ sessionHash: outboxSessions.sessionHash })
    .from(outboxSessions)
    .where(and(eq(outboxSessions.sessionHash, sessionHash), gt(outboxSessions.expiresAt, now)))
  return row !== undefined
}

export async function deleteSession(db: Database, sessionHash: string): Promise<void> {
  await db.delete(outboxSessions).where(eq(outboxSessions.sessionHash, sessionHash))
}

export async function deleteExpiredSessions(db: Database, now: Date): Promise<void> {
  await db.delete(outboxSessions).where(lte(outboxSessions.expiresAt, now))
}
