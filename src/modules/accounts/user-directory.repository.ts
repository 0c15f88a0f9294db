import { and, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type CursorWindow, keysetList, placeField, selectListPage } from '../../platform/db/page.js'
import { users } from './tables.js'

/** The user directory, newest first: along the primary key (ids start with their time). */
export const userDirectory = keysetList('users', users.id, users.id)

/**
 * One page of the users not removed, newest first; with `email`, the one user whose address it is in any
 * case (along users_email_unique, the index of lower(email)).
 */
export function listDirectoryUsers(db: Database, email: string | undefined, window: CursorWindow) {
  return selectListPage(
    db,
    db
      .select({ id: users.id, email: users.email, name: users.name, ...placeField(userDirectory) })
      .from(users)
      .$dynamic(),
    {
      ...userDirectory,
      from: users,
      where: and(
        isNull(users.removedAt),
        email === undefined ? undefined : eq(sql`lower(${users.email})`, sql`lower(${email.trim()})`),
      ),
    },
    window,
  )
}
