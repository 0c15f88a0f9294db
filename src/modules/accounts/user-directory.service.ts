import type { Database } from '../../platform/db/connection.js'
import { isCursorWindow } from '../../platform/db/page.js'
import type { CursorPagination } from '../../platform/http/envelope.js'
import { paginateList } from '../../platform/http/pagination.js'
import { listDirectoryUsers, userDirectory } from './user-directory.repository.js'
import type { UserDirectoryQuery } from './user-directory.schemas.js'
import type { FoundUser } from './user-search.schemas.js'
import { withTheirAccounts } from './user-search.service.js'

/**
 * `GET /v1/admin/users`: every user (removed ones left out), newest first, or the one with `email`; each
 * with the accounts they belong to. Read on with the page's `next_cursor`.
 */
export async function listUserDirectory(
  db: Database,
  query: UserDirectoryQuery,
): Promise<{ data: FoundUser[]; pagination: CursorPagination }> {
  const { data, pagination } = await paginateList(
    userDirectory,
    { page: 1, limit: query.limit, cursor: query.cursor ?? '' },
    async (window) => {
      // Always a cursor's window: the directory is read by cursor only, from the empty cursor on.
      if (!isCursorWindow(window)) throw new Error('the user directory is read by cursor only')
      const page = await listDirectoryUsers(db, query.email, window)
      return { ...page, rows: await withTheirAccounts(db, page.rows) }
    },
    (user) => user,
  )
  return { data, pagination: pagination as CursorPagination }
}
