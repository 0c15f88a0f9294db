import type { Database } from '../../platform/db/connection.js'
import { NotFound } from '../../platform/http/errors.js'
import type { Logger } from '../../platform/log/logger.js'
import type { Account } from '../accounts/accounts.schemas.js'
import { getAccount } from '../accounts/accounts.service.js'
import type { ListingsAccountsResponse, ListingsApi, ListingsQuery } from './listings-api.js'

/** The spec's error result of `find`, compared word for word by callers. */
export interface ListingsLookupError {
  error: true
  message: string
}

export const RECORD_NOT_FOUND = 'Record not found'
export const NOT_INITIALIZED = 'Listings not initialized for this account.'
export const LOOKUP_FAILED = 'Listings lookup failed'

const lookupError = (message: string): ListingsLookupError => ({ error: true, message })

/** The entity id, or the spec's error result; database errors propagate. */
async function lookupListingsEntity(db: Database, accountId: string): Promise<string | ListingsLookupError> {
  const account = await getAccount(db, accountId)
  if (!account) return lookupError(RECORD_NOT_FOUND)
  return account.listings.entity === '' ? lookupError(NOT_INITIALIZED) : account.listings.entity
}

/**
 * The spec's `find`: the account's listings entity id, or an error result. Never throws: a database
 * failure is logged and answered as an error result too, as the spec's callers only test `error`.
 */
export async function findListingsEntity(
  db: Database,
  accountId: string,
  log: Logger,
): Promise<string | ListingsLookupError> {
  try {
    return await lookupListingsEntity(db, accountId)
  } catch (error) {
    log.error({ err: error, accountId }, 'listings entity lookup failed')
    return lookupError(LOOKUP_FAILED)
  }
}

/** The spec's `getAccount`: the full account, or null. */
export async function getListingsAccount(db: Database, accountId: string): Promise<Account | null> {
  return getAccount(db, accountId)
}

/**
 * The spec's `list`: the external API's account list, unchanged, for an account linked to a listings
 * entity; 404 with `find`'s message otherwise. It looks the entity up without `find`'s catch, so that
 * a database failure is a 500 rather than a 404.
 * The spec's operation also takes a body object; the external call is a GET, which carries none, so
 * there is no body parameter to ignore.
 */
export async function listListingsAccounts(
  db: Database,
  api: ListingsApi,
  accountId: string,
  query: ListingsQuery,
): Promise<ListingsAccountsResponse> {
  const entity = await lookupListingsEntity(db, accountId)
  if (typeof entity !== 'string') throw new NotFound(entity.message)
  return api.listAccounts(query)
}
