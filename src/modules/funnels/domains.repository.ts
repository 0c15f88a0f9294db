import { and, asc, count, eq, ilike } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { containsPattern } from '../../platform/db/search.js'
import { funnelDomains, funnels } from './tables.js'

export type DomainRow = typeof funnelDomains.$inferSelect

/** The new domain, or undefined when the hostname is taken (by any account). */
export async function insertDomain(
  db: Database,
  accountId: string,
  values: { name: string; sslEnabled: boolean },
): Promise<DomainRow | undefined> {
  const [row] = await db
    .insert(funnelDomains)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning()
  return row
}

/**
 * The account's domain; with `forShare`, locked against deletion until the transaction ends (for a
 * funnel taking it).
 */
export async function findDomain(
  db: Database,
  accountId: string,
  domainId: string,
  options: { forShare?: boolean } = {},
): Promise<DomainRow | undefined> {
  const query = db
    .select()
    .from(funnelDomains)
    .where(and(eq(funnelDomains.accountId, accountId), eq(funnelDomains.id, domainId)))
    .$dynamic()
  const [row] = await (options.forShare ? query.for('key share') : query)
  return row
}

export async function listDomains(
  db: Database,
  accountId: string,
  page: { search?: string; offset: number; limit: number },
): Promise<{ rows: DomainRow[]; total: number }> {
  const where = and(
    eq(funnelDomains.accountId, accountId),
    page.search ? ilike(funnelDomains.name, containsPattern(page.search)) : undefined,
  )
  const [rows, [totals]] = await Promise.all([
    db
      .select()
      .from(funnelDomains)
      .where(where)
      .orderBy(asc(funnelDomains.name))
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(funnelDomains).where(where),
  ])
  return { rows, total: totals?.total ?? 0 }
}

/**
 * Deletes the domain; the funnels on it lose it (the foreign key sets it null). Returns the ids of those
 * funnels, or undefined when the account has no such domain. The domain row is locked first, so that no
 * funnel takes the domain between the listing and the delete (its foreign key check would wait for us).
 */
export async function deleteDomain(
  tx: Database,
  accountId: string,
  domainId: string,
): Promise<string[] | undefined> {
  const [locked] = await tx
    .select({ id: funnelDomains.id })
    .from(funnelDomains)
    .where(and(eq(funnelDomains.accountId, accountId), eq(funnelDomains.id, domainId)))
    .for('update')
  if (!locked) return undefined
  const served = await tx
    .select({ id: funnels.id })
    .from(funnels)
    .where(and(eq(funnels.accountId, accountId), eq(funnels.domainId, domainId)))
  await tx.delete(funnelDomains).where(eq(funnelDomains.id, domainId))
  return served.map((funnel) => funnel.id)
}
