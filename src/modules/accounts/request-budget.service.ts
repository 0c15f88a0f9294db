import type { Database } from '../../platform/db/connection.js'
import { NotFound } from '../../platform/http/errors.js'
import { findAccount, updateAccount as updateAccountRow } from './accounts.repository.js'
import { type AccessChanges, requireChangeableAccount } from './accounts.service.js'
import type { RequestBudget } from './request-budget.schemas.js'

/** The service's budget for accounts without their own (ACCOUNT_REQUEST_BUDGET and its window). */
export interface BudgetDefaults {
  requests: number
  windowSeconds: number
}

const budgetView = (accountId: string, own: number | null, defaults: BudgetDefaults): RequestBudget => ({
  account_id: accountId,
  requests: own,
  effective_requests: own ?? defaults.requests,
  window_seconds: defaults.windowSeconds,
})

export async function getRequestBudget(
  db: Database,
  defaults: BudgetDefaults,
  accountId: string,
): Promise<RequestBudget> {
  const account = await findAccount(db, accountId)
  if (!account) throw new NotFound('Account not found')
  return budgetView(accountId, account.requestBudget, defaults)
}

/**
 * Gives the account a budget of its own (null: the default again). Every instance counts against it from
 * its next request: the budget travels with the account's access verdict (platform/auth/account-access.ts),
 * which the change clears here at once and, with Redis, on the other instances at once; without Redis they
 * read it again within OAUTH_REVOCATION_CACHE_MS.
 */
export async function setRequestBudget(
  db: Database,
  deps: { access: AccessChanges; defaults: BudgetDefaults },
  accountId: string,
  requests: number | null,
): Promise<RequestBudget> {
  await requireChangeableAccount(db, accountId)
  const row = await updateAccountRow(db, accountId, { requestBudget: requests })
  if (!row) throw new NotFound('Account not found')
  await deps.access.changed(accountId)
  return budgetView(accountId, row.requestBudget, deps.defaults)
}
