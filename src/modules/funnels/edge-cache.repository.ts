import { and, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelSteps, funnels } from './tables.js'

/** The ids of a funnel's steps, in id order (the order they were created in). */
export async function listStepIds(db: Database, accountId: string, funnelId: string): Promise<string[]> {
  const rows = await db
    .select({ id: funnelSteps.id })
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.funnelId, funnelId)))
    .orderBy(funnelSteps.id)
  return rows.map((row) => row.id)
}

/** The ids of the account's funnels, in id order. */
export async function listFunnelIds(db: Database, accountId: string): Promise<string[]> {
  const rows = await db
    .select({ id: funnels.id })
    .from(funnels)
    .where(eq(funnels.accountId, accountId))
    .orderBy(funnels.id)
  return rows.map((row) => row.id)
}
