import { and, asc, eq, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { type CursorWindow, keysetList, type ListPage } from '../../platform/db/page.js'
import type { AccountRow } from './accounts.repository.js'
import type { AccountStatus } from './accounts.schemas.js'
import { accountDirectoryName, accounts } from './tables.js'

/**
 * The account directory's cursors name the page's last account by its id; its place in the order (the
 * name) is read back from it, so that the platform's cursors serve a list ordered by a text key.
 */
export const accountDirectory = keysetList('accounts_by_name', accounts.id, accounts.id, 'asc')

export interface AccountFilters {
  name?: string
  status?: AccountStatus
  parent?: string
}

/** Where an account stands in the directory: its name as ordered, and its id. */
export interface DirectoryPlace {
  name: string
  id: string
}

const orderedName = accountDirectoryName(accounts.name)

/** The directory's place of the account, or undefined when there is no such account (any more). */
export async function findDirectoryPlace(
  db: Database,
  accountId: string,
): Promise<DirectoryPlace | undefined> {
  const [row] = await db
    .select({ name: sql<string>`${orderedName}`, id: accounts.id })
    .from(accounts)
    .where(eq(accounts.id, accountId))
  return row
}

/**
 * The names that start with `prefix`, in any case: a range of the ordered names (in the "C" collation,
 * byte order, so everything that starts with the prefix lies below it followed by the last code point).
 */
function nameStartsWith(prefix: string): SQL {
  const start = sql`lower(${prefix}::text) collate "C"`
  return sql`${orderedName} >= ${start} and ${orderedName} < (${start} || chr(1114111)) collate "C"`
}

/**
 * One page of the accounts matching every filter given, by name then id, after `after` (none: from the
 * start), reading one more to know whether another page follows. Each combination is read along one index
 * (accounts_directory_*): the parent's, else the status', else the names'; a name prefix is a range of it.
 */
export async function listDirectoryAccounts(
  db: Database,
  filters: AccountFilters,
  window: Omit<CursorWindow, 'after'> & { after: DirectoryPlace | undefined },
): Promise<ListPage<AccountRow>> {
  const where = and(
    filters.parent === undefined ? undefined : eq(accounts.parentAccount, filters.parent),
    filters.status === undefined ? undefined : eq(accounts.status, filters.status),
    filters.name === undefined ? undefined : nameStartsWith(filters.name),
    window.after &&
      sql`(${orderedName}, ${accounts.id}) > (${window.after.name} collate "C", ${window.after.id})`,
  )
  const read = await db
    .select()
    .from(accounts)
    .where(where)
    .orderBy(asc(orderedName), asc(accounts.id))
    .limit(window.limit + 1)
  const rows = read.slice(0, window.limit)
  const last = rows.at(-1)
  return { rows, next: read.length > window.limit && last ? { key: last.id, id: last.id } : null }
}
