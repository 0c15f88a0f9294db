import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Invalid, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import {
  type DoNotDisturbRow,
  deleteDoNotDisturbEntry,
  findListedValues,
  insertOrFindDoNotDisturbEntry,
  listDoNotDisturbEntries,
} from './do-not-disturb.repository.js'
import type { AddBody, DoNotDisturbEntry } from './do-not-disturb.schemas.js'

const entryView = (row: DoNotDisturbRow): DoNotDisturbEntry => ({
  _id: row.id,
  account_id: row.accountId,
  value: row.value,
  type: row.type,
  reason: row.reason,
  createdAt: row.createdAt.toISOString(),
})

/** The spec's refusal when any recipient is listed. */
export const DND_ENABLED = 'DND enabled for received email(s).'

/** That refusal as a type of its own: other modules branch on it (`instanceof`), never on its words. */
export class DoNotDisturbRefusal extends Invalid {
  constructor(readonly emails: string[]) {
    super(DND_ENABLED, { emails })
  }
}

/** Refuses a send when any of the addresses (to, cc, bcc) is on the account's list. */
export async function assertNotOnDoNotDisturb(
  db: Database,
  accountId: string,
  addresses: string[],
): Promise<void> {
  const listed = await findListedValues(db, accountId, addresses)
  if (listed.length > 0) throw new DoNotDisturbRefusal(listed)
}

/**
 * Puts an address on the account's list. Repeating it (a retried request, a second unsubscribe
 * event) changes nothing and returns the entry that is there, with `created: false`.
 */
export async function addToDoNotDisturb(
  db: Database,
  accountId: string,
  input: AddBody,
): Promise<{ entry: DoNotDisturbEntry; created: boolean }> {
  const { row, created } = await insertOrFindDoNotDisturbEntry(db, accountId, {
    value: input.value.trim(),
    type: input.type ?? 'permanent',
    reason: input.reason ?? '',
  })
  return { entry: entryView(row), created }
}

export function listDoNotDisturb(
  db: Database,
  accountId: string,
  query: { search?: string; page: number; limit: number },
): Promise<{ data: DoNotDisturbEntry[]; pagination: Pagination }> {
  return paginate(
    query,
    (window) => listDoNotDisturbEntries(db, accountId, { search: query.search, ...window }),
    entryView,
  )
}

export async function removeFromDoNotDisturb(
  db: Database,
  accountId: string,
  entryId: string,
): Promise<void> {
  if (!(await deleteDoNotDisturbEntry(db, accountId, entryId)))
    throw new NotFound('Do-not-disturb entry not found')
}
