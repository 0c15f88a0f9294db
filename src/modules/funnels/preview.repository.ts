import { and, asc, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelSteps, funnels, funnelTagLinks } from './tables.js'

/**
 * A live funnel found by its id alone: the preview is public, so there is no caller's account to scope
 * by; what it reads next is scoped by the funnel's own account.
 */
export async function findLiveFunnelById(db: Database, funnelId: string) {
  const [funnel] = await db
    .select()
    .from(funnels)
    .where(and(eq(funnels.id, funnelId), eq(funnels.deleted, false)))
  return funnel
}

/** The funnel's steps in their order. */
export function findStepsInOrder(db: Database, accountId: string, funnelId: string) {
  return db
    .select()
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.funnelId, funnelId)))
    .orderBy(asc(funnelSteps.order), asc(funnelSteps.id))
}

export async function findTagIds(db: Database, accountId: string, funnelId: string): Promise<string[]> {
  const rows = await db
    .select({ tagId: funnelTagLinks.tagId })
    .from(funnelTagLinks)
    .where(and(eq(funnelTagLinks.accountId, accountId), eq(funnelTagLinks.funnelId, funnelId)))
  return rows.map((row) => row.tagId)
}
