import { and, eq, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { funnelStepComponents, funnelSteps, funnelTagLinks } from './tables.js'

/**
 * Copies the steps of `fromFunnelId` (content, seo, tracking codes, fonts) and their current components
 * into `toFunnelId` of `toAccountId`. The copies have never been synced by the edge: no checksum.
 */
export async function copySteps(
  tx: Database,
  from: { accountId: string; funnelId: string },
  to: { accountId: string; funnelId: string },
): Promise<void> {
  const steps = await tx
    .select()
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, from.accountId), eq(funnelSteps.funnelId, from.funnelId)))
  if (steps.length === 0) return
  const copyOf = new Map(steps.map((step) => [step.id, newId()]))
  await tx.insert(funnelSteps).values(
    steps.map(({ createdAt: _, updatedAt: __, ...step }) => ({
      ...step,
      id: copyOf.get(step.id) as string,
      accountId: to.accountId,
      funnelId: to.funnelId,
      checksum: null,
    })),
  )
  const components = await tx
    .select()
    .from(funnelStepComponents)
    .where(
      and(
        eq(funnelStepComponents.accountId, from.accountId),
        inArray(funnelStepComponents.stepId, [...copyOf.keys()]),
      ),
    )
  if (components.length === 0) return
  await tx.insert(funnelStepComponents).values(
    components.map((row) => ({
      ...row,
      id: newId(),
      accountId: to.accountId,
      stepId: copyOf.get(row.stepId) as string,
      funnelId: to.funnelId,
    })),
  )
}

/** Gives the copy, in the same account, the tags of the original. */
export async function copyTags(tx: Database, accountId: string, fromFunnelId: string, toFunnelId: string) {
  const links = await tx
    .select({ tagId: funnelTagLinks.tagId })
    .from(funnelTagLinks)
    .where(and(eq(funnelTagLinks.accountId, accountId), eq(funnelTagLinks.funnelId, fromFunnelId)))
  if (links.length)
    await tx
      .insert(funnelTagLinks)
      .values(links.map((link) => ({ accountId, funnelId: toFunnelId, tagId: link.tagId })))
}
