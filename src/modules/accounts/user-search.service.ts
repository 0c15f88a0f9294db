import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { paginate } from '../../platform/http/pagination.js'
import { findAccountsOfUsers, searchUsersByEmail } from './user-search.repository.js'
import type { FoundUser } from './user-search.schemas.js'

/** The users, each with the accounts they belong to (one query for the page's accounts). */
export async function withTheirAccounts(
  db: Database,
  users: { id: string; email: string; name: string }[],
): Promise<FoundUser[]> {
  const accounts = await findAccountsOfUsers(
    db,
    users.map((user) => user.id),
  )
  return users.map((user) => ({
    _id: user.id,
    email: user.email,
    name: user.name,
    accounts: accounts
      .filter((account) => account.userId === user.id)
      .map(({ accountId, name, main }) => ({ _id: accountId, name, main })),
  }))
}

/** The user directory of the spec's `findUsers`: users by email, each with the accounts they belong to. */
export function findUsersByEmail(
  db: Database,
  query: { email: string; page: number; limit: number },
): Promise<{ data: FoundUser[]; pagination: Pagination }> {
  return paginate(
    query,
    async (window) => {
      const { rows, total } = await searchUsersByEmail(db, query.email, window)
      return { rows: await withTheirAccounts(db, rows), total }
    },
    (user) => user,
  )
}
