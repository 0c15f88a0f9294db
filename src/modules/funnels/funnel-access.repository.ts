import { and, eq } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelSteps, funnels } from './tables.js'

export type FunnelRow = typeof funnels.$inferSelect
export type StepRow = typeof funnelSteps.$inferSelect

/** A live (not soft-deleted) funnel of the account. */
export async function findLiveFunnel(db: Database, accountId: string, funnelId: string) {
  const [funnel] = await db
    .select()
    .from(funnels)
    .where(and(eq(funnels.accountId, accountId), eq(funnels.id, funnelId), eq(funnels.deleted, false)))
  return funnel
}

/** A step of a live funnel of the account, with its funnel. */
export async function findStepOfLiveFunnel(db: Database, accountId: string, stepId: string) {
  const [found] = await db
    .select({ step: funnelSteps, funnel: funnels })
    .from(funnelSteps)
    .innerJoin(
      funnels,
      and(eq(funnels.accountId, funnelSteps.accountId), eq(funnels.id, funnelSteps.funnelId)),
    )
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.id, stepId), eq(funnels.deleted, false)))
  return found
}
