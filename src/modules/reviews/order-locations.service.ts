import type { Database } from '../../platform/db/connection.js'
import type { Pagination } from '../../platform/http/envelope.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { paginate } from '../../platform/http/pagination.js'
import {
  deleteClaim,
  findAccountClaim,
  findLocationOwner,
  hasClaim,
  insertClaim,
  listClaims,
  type OrderLocationRow,
} from './order-locations.repository.js'
import type { ListQuery, OrderLocation } from './order-locations.schemas.js'

export const LOCATION_NOT_FOUND = 'Location not found'
/** Says no more than that: which account holds it is not the caller's business. */
export const LOCATION_CLAIMED = 'This location is claimed by another account'

const locationView = (row: OrderLocationRow): OrderLocation => ({
  _id: row.id,
  account_id: row.accountId,
  location_id: row.locationId,
  created_at: row.createdAt.toISOString(),
})

/** Claims a Square location for the account: 409 when another account holds it; claiming again is a no-op. */
export async function claimLocation(
  db: Database,
  accountId: string,
  locationId: string,
): Promise<{ location: OrderLocation; created: boolean }> {
  const created = await insertClaim(db, accountId, locationId)
  if (created) return { location: locationView(created), created: true }
  const own = await findAccountClaim(db, accountId, locationId)
  if (!own) throw new Conflict(LOCATION_CLAIMED)
  return { location: locationView(own), created: false }
}

export function listAccountLocations(
  db: Database,
  accountId: string,
  query: ListQuery,
): Promise<{ data: OrderLocation[]; pagination: Pagination }> {
  return paginate(query, (window) => listClaims(db, accountId, window), locationView)
}

export async function releaseLocation(db: Database, accountId: string, locationId: string): Promise<void> {
  if (!(await deleteClaim(db, accountId, locationId))) throw new NotFound(LOCATION_NOT_FOUND)
}

/** Whether Square's order events can be the account's: it claims a location. */
export const hasClaimedLocation = (db: Database, accountId: string): Promise<boolean> =>
  hasClaim(db, accountId)

/** The account whose Square location an order event names, if any claims it. */
export const locationOwner = (db: Database, locationId: string): Promise<string | undefined> =>
  findLocationOwner(db, locationId)
