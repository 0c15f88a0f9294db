import type { Database } from '../../platform/db/connection.js'
import { isUniqueViolation } from '../../platform/db/errors.js'
import { Conflict, Invalid, NotFound } from '../../platform/http/errors.js'
import { findComponents, upsertComponents } from './components.repository.js'
import { storeComponents } from './components.service.js'
import { stepTag } from './edge-protocol.js'
import type { StepRow } from './funnel-access.repository.js'
import {
  normalisePath,
  PATH_ALREADY_IN_USE,
  requireFunnel,
  requireStep,
  STEP_NOT_FOUND,
} from './funnel-access.service.js'
import { copyPathCandidates } from './funnel-paths.service.js'
import { type FunnelWriteDeps, inFunnelWrite } from './step-cache.js'
import {
  deleteStepRow,
  findStepAtPath,
  findStepOrders,
  findStepPaths,
  insertStep,
  lockFunnel,
  nextStepOrder,
  renumberSteps,
  type StepChanges,
  updateStepOrders,
  updateStepRow,
} from './steps.repository.js'
import type {
  CreateStepBody,
  Step,
  StepOrders,
  StepOrdersBody,
  StepSettingsBody,
  UpdateStepBody,
} from './steps.schemas.js'

const iso = (date: Date) => date.toISOString()

export const stepView = (row: StepRow): Step => ({
  _id: row.id,
  funnel_id: row.funnelId,
  name: row.name,
  path: row.path,
  type: row.type,
  order: row.order,
  ...(row.html !== null && { html: row.html }),
  seo: row.seo,
  tracking_code: row.trackingCode,
  ...(row.css !== null && { css: row.css }),
  external_fonts: row.externalFonts,
  created_at: iso(row.createdAt),
  updated_at: iso(row.updatedAt),
})

/**
 * Runs a write that may give a step of the funnel a `path` another step holds: the unique index decides,
 * also between two concurrent writes, and the loser gets 409 `Path already in use` naming the holder.
 */
async function claimingPath<T>(
  db: Database,
  accountId: string,
  funnelId: string,
  path: string | undefined,
  write: () => Promise<T>,
): Promise<T> {
  try {
    return await write()
  } catch (error) {
    if (path === undefined || !isUniqueViolation(error)) throw error
    const conflicting = await findStepAtPath(db, accountId, funnelId, path)
    throw new Conflict(PATH_ALREADY_IN_USE, { path, ...(conflicting && { conflicting_step: conflicting }) })
  }
}

const pathOf = (path: string | undefined) => (path === undefined ? undefined : normalisePath(path))

export async function getStep(db: Database, accountId: string, funnelId: string, stepId: string) {
  return stepView((await requireStep(db, accountId, stepId, funnelId)).step)
}

/** A new step of the funnel; without an `order`, after its last step. */
export async function createStep(
  deps: FunnelWriteDeps,
  accountId: string,
  funnelId: string,
  { stepInfo }: CreateStepBody,
): Promise<Step> {
  const path = normalisePath(stepInfo.path)
  const step = await claimingPath(deps.db, accountId, funnelId, path, () =>
    inFunnelWrite(deps, funnelId, async (tx) => {
      await requireFunnel(tx, accountId, funnelId)
      await lockFunnel(tx, accountId, funnelId)
      return insertStep(tx, {
        accountId,
        funnelId,
        name: stepInfo.name,
        path,
        type: stepInfo.type ?? 'page',
        order: stepInfo.order ?? (await nextStepOrder(tx, accountId, funnelId)),
      })
    }),
  )
  return stepView(step)
}

/** The builder's save of a step: its name and path, its fonts, and its components (backed up first). */
/** What a step save needs beyond a funnel write: the edge's copies of the step purged once it commits. */
export interface StepSaveDeps extends FunnelWriteDeps {
  purgeAtEdge(tags: string[]): void
}

export async function updateStep(
  deps: StepSaveDeps,
  accountId: string,
  funnelId: string,
  stepId: string,
  { stepInfo, builderComponents, externalFonts }: UpdateStepBody,
): Promise<Step> {
  const path = pathOf(stepInfo?.path)
  const changes: StepChanges = { name: stepInfo?.name, path, externalFonts }
  const step = await claimingPath(deps.db, accountId, funnelId, path, () =>
    inFunnelWrite(deps, funnelId, async (tx) => {
      const { step } = await requireStep(tx, accountId, stepId, funnelId)
      if (builderComponents)
        await storeComponents(tx, accountId, step, builderComponents, 'Before step update')
      const updated = await updateStepRow(tx, accountId, stepId, changes)
      if (!updated) throw new NotFound(STEP_NOT_FOUND)
      return updated
    }),
  )
  // The spec: "a backup is created and the cache for the step purged", here and at the edge.
  deps.purgeAtEdge([stepTag(stepId)])
  return stepView(step)
}

/** The page settings of a step (named by its id alone): name, path, seo, tracking codes, css. */
export async function updateStepSettings(
  deps: FunnelWriteDeps,
  accountId: string,
  stepId: string,
  { details, seo, tracking_code, css }: StepSettingsBody,
): Promise<Step> {
  const { funnel } = await requireStep(deps.db, accountId, stepId)
  const path = pathOf(details?.path)
  const changes: StepChanges = { name: details?.name, path, seo, trackingCode: tracking_code, css }
  // One statement: atomic without a transaction of its own.
  const step = await claimingPath(deps.db, accountId, funnel.id, path, () =>
    updateStepRow(deps.db, accountId, stepId, changes),
  )
  if (!step) throw new NotFound(STEP_NOT_FOUND)
  deps.stepCache.forgetFunnel(funnel.id)
  return stepView(step)
}

/** Sets the order of the listed steps in one bulk write; every id must be a step of the funnel. */
export async function reorderSteps(
  deps: FunnelWriteDeps,
  accountId: string,
  funnelId: string,
  { orders }: StepOrdersBody,
): Promise<StepOrders> {
  const repeated = orders.findIndex((o, i) => orders.findIndex((p) => p.step_id === o.step_id) !== i)
  if (repeated >= 0) throw new Invalid(`orders[${repeated}].step_id repeats ${orders[repeated]?.step_id}`)
  const steps = await inFunnelWrite(deps, funnelId, async (tx) => {
    await requireFunnel(tx, accountId, funnelId)
    await lockFunnel(tx, accountId, funnelId)
    const updated = new Set(await updateStepOrders(tx, accountId, funnelId, orders))
    const foreign = orders.findIndex((o) => !updated.has(o.step_id))
    // Thrown inside the transaction, so that none of the orders stays.
    if (foreign >= 0)
      throw new Invalid(`orders[${foreign}].step_id ${orders[foreign]?.step_id} is not a step of this funnel`)
    return findStepOrders(tx, accountId, funnelId)
  })
  return { _id: funnelId, steps }
}

/** `/checkout` -> `/checkout-copy`, then `/checkout-copy-2`, … (a funnel copy's names): the first not taken. */
function copyPath(path: string, taken: Set<string>): string {
  // One more candidate than there are taken paths: one of them is free.
  return copyPathCandidates(path, 1, taken.size + 1).find((candidate) => !taken.has(candidate)) as string
}

/** A copy of the step, named with ' (Copy)', its components copied, placed after the funnel's last step. */
export async function duplicateStep(
  deps: FunnelWriteDeps,
  accountId: string,
  funnelId: string,
  stepId: string,
): Promise<Step> {
  const copy = await inFunnelWrite(deps, funnelId, async (tx) => {
    const { step } = await requireStep(tx, accountId, stepId, funnelId)
    await lockFunnel(tx, accountId, funnelId)
    const copy = await insertStep(tx, {
      accountId,
      funnelId,
      name: `${step.name} (Copy)`,
      path: copyPath(step.path, new Set(await findStepPaths(tx, accountId, funnelId))),
      type: step.type,
      order: await nextStepOrder(tx, accountId, funnelId),
      html: step.html,
      seo: step.seo,
      trackingCode: step.trackingCode,
      css: step.css,
      externalFonts: step.externalFonts,
    })
    const components = await findComponents(tx, accountId, step.id)
    if (components) {
      const { checksum } = components
      await upsertComponents(tx, accountId, {
        stepId: copy.id,
        funnelId,
        components: components.components,
        checksum,
      })
    }
    return copy
  })
  return stepView(copy)
}

/** Deletes the step for good (its components and backups go with it) and renumbers the others 0..n-1. */
export async function deleteStep(
  deps: FunnelWriteDeps,
  accountId: string,
  funnelId: string,
  stepId: string,
): Promise<void> {
  await inFunnelWrite(deps, funnelId, async (tx) => {
    await requireStep(tx, accountId, stepId, funnelId)
    await lockFunnel(tx, accountId, funnelId)
    if (!(await deleteStepRow(tx, accountId, funnelId, stepId))) throw new NotFound(STEP_NOT_FOUND)
    await renumberSteps(tx, accountId, funnelId)
  })
}
