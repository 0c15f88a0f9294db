import { and, asc, eq, ilike, inArray, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { containsPattern } from '../../platform/db/search.js'
import { accounts, memberships, users } from './tables.js'

/**
 * Users whose email contains `email` (case-insensitive), by email. Deliberately across accounts: only
 * the admin-guarded user directory calls it.
 */
export async function searchUsersByEmail(
  db: Database,
  email: string,
  window: { offset: number; limit: number },
): Promise<{ rows: { id: string; email: string; name: string }[]; total: number }> {
  const matches = and(ilike(users.email, containsPattern(email)), isNull(users.removedAt))
  return selectPage(
    db,
    db
      .select({ id: users.id, email: users.email, name: users.name })
      .from(users)
      .where(matches)
      .orderBy(asc(users.email), asc(users.id))
      .$dynamic(),
    { from: users, where: matches },
    window,
  )
}

/** The accounts of the users, with their names and which one is each user's main account. */
export function findAccountsOfUsers(
  db: Database,
  userIds: string[],
): Promise<{ userId: string; accountId: string; name: string; main: boolean }[]> {
  if (userIds.length === 0) return Promise.resolve([])
  return db
    .select({
      userId: memberships.userId,
      accountId: accounts.id,
      name: accounts.name,
      main: memberships.main,
    })
    .from(memberships)
    .innerJoin(accounts, eq(accounts.id, memberships.accountId))
    .where(inArray(memberships.userId, userIds))
    .orderBy(asc(memberships.createdAt))
}

/** The user with this email, in any case (emails are unique by their lower-case form). */
export async function findUserByEmail(
  db: Database,
  email: string,
): Promise<{ id: string; email: string; name: string; passwordHash: string } | undefined> {
  const [row] = await db
    .select({ id: users.id, email: users.email, name: users.name, passwordHash: users.passwordHash })
    .from(users)
    .where(eq(sql`lower(${users.email})`, email.trim().toLowerCase()))
  return row
}
