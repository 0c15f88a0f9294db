import { and, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelSteps } from './tables.js'

/** The ids of a funnel's steps. */
export async function listStepIds(db: Database, accountId: string, funnelId: string): Promise<string[]> {
  const rows = await db
    .select({ id: funnelSteps.id })
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.funnelId, funnelId)))
  return rows.map((row) => row.id)
}
