import type { CatalogReference, CatalogTable, Ownership } from './account-catalog.repository.js'

// Which rows of the schema are an account's, shared by the account's export and its removal: both read the
// tables from PostgreSQL's catalog, so that a table added later is exported and removed without a change here.

/** Every table with an `account_id` column: its rows are the account's. */
export const BY_ACCOUNT_ID: Ownership = { column: 'account_id' }

/**
 * Tables without `account_id` whose rows are the account's through another row: the accounts themselves,
 * and the users who are their members (a user may belong to several accounts; each export holds them, and
 * a removal takes only the users no other account holds).
 */
export const REACHED_THROUGH: Record<string, Ownership> = {
  accounts: { column: 'id' },
  users: {
    column: 'id',
    referencedBy: [
      { table: 'memberships', column: 'user_id' },
      { table: 'chat_identities', column: 'user_id' },
    ],
  },
}

/**
 * The users an account's export holds: its members. A former member's chat identity stays with the account's
 * history (the messages they wrote), but their user (email, name, phone, as they are now) is no longer the
 * account's to hand out; a removal still takes them when no other account holds them (REACHED_THROUGH).
 */
export const EXPORTED_USERS: Ownership = {
  column: 'id',
  referencedBy: [{ table: 'memberships', column: 'user_id' }],
}

/**
 * Tables without `account_id` that hold no account's rows, and why. A table with neither an `account_id`
 * column nor an entry here or in REACHED_THROUGH fails the catalog tests of the export and the removal,
 * so none is forgotten.
 */
export const NOT_ACCOUNT_OWNED: Record<string, string> = {
  mail_event_batches: "SendGrid's raw event posts, for every account at once; their events are exported",
  lead_webhook_events: "Meta's raw lead posts, for every page at once; the leads they made are exported",
  oauth_apps: "third-party apps the operator registers for every account; the account's grants are exported",
  oauth_scopes: "the platform's scope catalog",
  outbox_sessions: "the operator's sessions on the outbox page",
  account_removals: "the operator's record of a removal, kept once the account's rows are gone",
}

/** A table holding accounts' rows, and how its rows are found to be an account's. */
export interface AccountTable {
  name: string
  columns: string[]
  keyColumns: string[]
  ownership: Ownership
}

/** The catalog's tables that hold accounts' rows, by name. */
export function accountTables(catalog: CatalogTable[]): AccountTable[] {
  return catalog.flatMap((table) => {
    const ownership = table.hasAccountId ? BY_ACCOUNT_ID : REACHED_THROUGH[table.name]
    if (!ownership) return []
    return [{ name: table.name, columns: table.columns, keyColumns: table.keyColumns, ownership }]
  })
}

/**
 * The tables in an order their rows can be deleted in: every table before the tables it references (the
 * catalog's foreign keys), so that no delete waits on, or cascades from, a parent row. Among tables free to
 * go, those with `account_id` first, then those reached through their rows (the users), then the accounts
 * themselves, each by name. A reference of a table to itself (`accounts.parent_account`) is left to the caller.
 */
export function childrenFirst<T extends AccountTable>(tables: T[], references: CatalogReference[]): T[] {
  const names = new Set(tables.map((table) => table.name))
  // For each table, the tables that reference it and must go before it.
  const waitingFor = new Map(tables.map((table) => [table.name, new Set<string>()]))
  for (const { table, referenced } of references) {
    if (table !== referenced && names.has(table) && names.has(referenced))
      waitingFor.get(referenced)?.add(table)
  }
  const ordered: T[] = []
  const rank = (table: T) => (table.ownership === BY_ACCOUNT_ID ? 0 : table.ownership.referencedBy ? 1 : 2)
  let left = [...tables].sort((a, b) => rank(a) - rank(b) || a.name.localeCompare(b.name))
  while (left.length > 0) {
    const done = new Set(ordered.map((table) => table.name))
    const free = left.filter((table) =>
      [...(waitingFor.get(table.name) ?? [])].every((child) => done.has(child)),
    )
    if (free.length === 0)
      throw new Error(`tables reference each other in a circle: ${left.map((t) => t.name).join(', ')}`)
    const [next] = free as [T]
    ordered.push(next)
    left = left.filter((table) => table !== next)
  }
  return ordered
}
