import { and, desc, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
import { reviewOrderLocations } from './tables.js'

export type OrderLocationRow = typeof reviewOrderLocations.$inferSelect

const ofAccount = (accountId: string, locationId: string) =>
  and(eq(reviewOrderLocations.accountId, accountId), eq(reviewOrderLocations.locationId, locationId))

/** The new claim, or none when the location is claimed already (by this account or another). */
export async function insertClaim(
  db: Database,
  accountId: string,
  locationId: string,
): Promise<OrderLocationRow | undefined> {
  const [row] = await db
    .insert(reviewOrderLocations)
    .values({ accountId, locationId })
    .onConflictDoNothing()
    .returning()
  return row
}

export async function findAccountClaim(
  db: Database,
  accountId: string,
  locationId: string,
): Promise<OrderLocationRow | undefined> {
  const [row] = await db.select().from(reviewOrderLocations).where(ofAccount(accountId, locationId))
  return row
}

export function listClaims(db: Database, accountId: string, page: { offset: number; limit: number }) {
  const where = eq(reviewOrderLocations.accountId, accountId)
  return selectPage(
    db,
    db
      .select()
      .from(reviewOrderLocations)
      .where(where)
      .orderBy(desc(reviewOrderLocations.createdAt), desc(reviewOrderLocations.id))
      .$dynamic(),
    { from: reviewOrderLocations, where },
    page,
  )
}

export async function deleteClaim(db: Database, accountId: string, locationId: string): Promise<boolean> {
  const rows = await db
    .delete(reviewOrderLocations)
    .where(ofAccount(accountId, locationId))
    .returning({ id: reviewOrderLocations.id })
  return rows.length === 1
}

/** Whether the account claims any location. */
export async function hasClaim(db: Database, accountId: string): Promise<boolean> {
  const [row] = await db
    .select({ id: reviewOrderLocations.id })
    .from(reviewOrderLocations)
    .where(eq(reviewOrderLocations.accountId, accountId))
    .limit(1)
  return row !== undefined
}

/**
 * The account that claims a location. Deliberately not scoped by account: an order event names only its
 * location, and the claim is what makes the event an account's.
 */
export async function findLocationOwner(db: Database, locationId: string): Promise<string | undefined> {
  const [row] = await db
    .select({ accountId: reviewOrderLocations.accountId })
    .from(reviewOrderLocations)
    .where(eq(reviewOrderLocations.locationId, locationId))
  return row?.accountId
}
