import type { Database } from '../../platform/db/connection.js'
import type { CursorPagination } from '../../platform/http/envelope.js'
import { Invalid } from '../../platform/http/errors.js'
import { paginateList } from '../../platform/http/pagination.js'
import {
  accountDirectory,
  findDirectoryPlace,
  listDirectoryAccounts,
} from './account-directory.repository.js'
import type { AccountDirectoryQuery } from './account-directory.schemas.js'
import type { Account } from './accounts.schemas.js'
import { accountView } from './accounts.service.js'

const GONE = 'names an account that no longer exists: list again without it'

/**
 * `GET /v1/admin/accounts`: the accounts whose name starts with `name` (any case), of `status`, below
 * `parent`, every filter given applying, by name; read on with the page's `next_cursor`.
 */
export async function listAccountDirectory(
  db: Database,
  query: AccountDirectoryQuery,
): Promise<{ data: Account[]; pagination: CursorPagination }> {
  const { data, pagination } = await paginateList(
    accountDirectory,
    { page: 1, limit: query.limit, cursor: query.cursor ?? '' },
    async (window) => {
      const id = 'after' in window ? window.after?.id : undefined
      const after = id === undefined ? undefined : await findDirectoryPlace(db, id)
      if (id !== undefined && !after)
        throw new Invalid(`cursor ${GONE}`, [{ field: 'cursor', message: GONE }])
      return listDirectoryAccounts(db, query, { after, limit: query.limit })
    },
    accountView,
  )
  return { data, pagination: pagination as CursorPagination }
}
