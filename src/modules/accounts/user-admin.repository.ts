import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { isUserHeld } from './accounts.repository.js'
import { memberships, users } from './tables.js'

/** Locks the user's row for the caller's transaction; false when there is no such user (or it was removed). */
export async function lockUser(db: Database, userId: string): Promise<boolean> {
  const rows = await db.select({ id: users.id }).from(users).where(isUserHeld(userId)).for('update')
  return rows.length === 1
}

/** Ends every membership of the user; the accounts they were a member of. */
export async function deleteMembershipsOfUser(db: Database, userId: string): Promise<string[]> {
  const rows = await db
    .delete(memberships)
    .where(eq(memberships.userId, userId))
    .returning({ accountId: memberships.accountId })
  return rows.map((row) => row.accountId).sort()
}

export async function listAccountIdsOfUser(db: Database, userId: string): Promise<string[]> {
  const rows = await db
    .select({ accountId: memberships.accountId })
    .from(memberships)
    .where(eq(memberships.userId, userId))
  return rows.map((row) => row.accountId).sort()
}

/**
 * Marks the user removed and erases the person: name, phone, picture, permissions and password go; the
 * address becomes the user's id (never an address, which has an @, so it frees the real one and clashes
 * with none under the unique index of lower(email)). When it was removed.
 */
export async function eraseUser(db: Database, userId: string): Promise<Date> {
  const [row] = await db
    .update(users)
    .set({
      email: userId,
      name: '',
      firstName: '',
      lastName: '',
      phone: '',
      image: '',
      passwordHash: '',
      permissions: [],
      removedAt: sql`now()`,
      updatedAt: sql`now()`,
    })
    .where(and(eq(users.id, userId), isNull(users.removedAt)))
    .returning({ removedAt: users.removedAt })
  return row?.removedAt as Date
}

/**
 * Replaces the user's password hash and starts their sessions after `now`; false when there is no such user
 * (or it was removed).
 */
export async function resetPasswordHash(
  db: Database,
  userId: string,
  passwordHash: string,
  now: Date,
): Promise<boolean> {
  const rows = await db
    .update(users)
    .set({ passwordHash, sessionsValidAfter: now, updatedAt: now })
    .where(isUserHeld(userId))
    .returning({ id: users.id })
  return rows.length === 1
}
