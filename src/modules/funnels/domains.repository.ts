import { and, asc, eq, ilike, isNull } from 'drizzle-orm'
import { alias } from 'drizzle-orm/pg-core'
import type { Database } from '../../platform/db/connection.js'
import { selectPage } from '../../platform/db/page.js'
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
  return selectPage(
    db,
    db.select().from(funnelDomains).where(where).orderBy(asc(funnelDomains.name)).$dynamic(),
    { from: funnelDomains, where },
    page,
  )
}

/** Locks the account's domain for the caller's transaction; false when the account has no such domain. */
export async function lockDomain(tx: Database, accountId: string, domainId: string): Promise<boolean> {
  const [locked] = await tx
    .select({ id: funnelDomains.id })
    .from(funnelDomains)
    .where(and(eq(funnelDomains.accountId, accountId), eq(funnelDomains.id, domainId)))
    .for('update')
  return locked !== undefined
}

const onDefaultHost = alias(funnels, 'on_default_host')

/**
 * A live funnel of the domain whose base path a live funnel of the account's default host already holds:
 * where the domain's funnels would land once it is gone.
 */
export async function findDefaultHostClash(tx: Database, accountId: string, domainId: string) {
  const [clash] = await tx
    .select({ path: funnels.basePath, holderId: onDefaultHost.id, holderName: onDefaultHost.name })
    .from(funnels)
    .innerJoin(
      onDefaultHost,
      and(
        eq(onDefaultHost.accountId, accountId),
        isNull(onDefaultHost.domainId),
        eq(onDefaultHost.deleted, false),
        eq(onDefaultHost.basePath, funnels.basePath),
      ),
    )
    .where(and(eq(funnels.accountId, accountId), eq(funnels.domainId, domainId), eq(funnels.deleted, false)))
    .limit(1)
  return clash
}

/**
 * Deletes the domain the caller has locked; the funnels on it lose it (the foreign key sets it null).
 * Returns the ids of those funnels. The lock keeps any funnel from taking the domain between the listing
 * and the delete (its foreign key check would wait for us).
 */
export async function deleteDomain(tx: Database, accountId: string, domainId: string): Promise<string[]> {
  const served = await tx
    .select({ id: funnels.id })
    .from(funnels)
    .where(and(eq(funnels.accountId, accountId), eq(funnels.domainId, domainId)))
  await tx
    .delete(funnelDomains)
    .where(and(eq(funnelDomains.accountId, accountId), eq(funnelDomains.id, domainId)))
  return served.map((funnel) => funnel.id)
}
