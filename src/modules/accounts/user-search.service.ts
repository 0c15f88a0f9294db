import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { paginate } from '../../platform/http/pagination.js'
import { findAccountsOfUsers, searchUsersByEmail } from './user-search.repository.js'
import type { FoundUser } from './user-search.schemas.js'

/** The user directory of the spec's `findUsers`: users by email, each with the accounts they belong to. */
export function findUsersByEmail(
  db: Database,
  query: { email: string; page: number; limit: number },
): Promise<{ data: FoundUser[]; pagination: Pagination }> {
  return paginate(
    query,
    async (window) => {
      const { rows, total } = await searchUsersByEmail(db, query.email, window)
      const accounts = await findAccountsOfUsers(
        db,
        rows.map((row) => row.id),
      )
      return {
        rows: rows.map((row) => ({
          ...row,
          accounts: accounts.filter((account) => account.userId === row.id),
        })),
        total,
      }
    },
    (row) => ({
      _id: row.id,
      email: row.email,
      name: row.name,
      accounts: row.accounts.map(({ accountId, name, main }) => ({ _id: accountId, name, main })),
    }),
  )
}
