import { and, asc, eq, max, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { rowsOf } from '../../platform/db/rows.js'
import type { StepRow } from './funnel-access.repository.js'
import { funnelSteps, funnels } from './tables.js'

const ofFunnel = (accountId: string, funnelId: string) =>
  and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.funnelId, funnelId))

/**
 * Locks the funnel's row for the rest of the transaction: writes that touch several of its steps (adding
 * one after the last, reordering, renumbering after a delete) run one at a time, each seeing the last
 * order and the paths taken by the one before, and never deadlock on each other's step rows.
 */
export async function lockFunnel(tx: Database, accountId: string, funnelId: string): Promise<void> {
  await tx
    .select({ id: funnels.id })
    .from(funnels)
    .where(and(eq(funnels.accountId, accountId), eq(funnels.id, funnelId)))
    .for('update')
}

/** The order that puts a step after the funnel's last one (0 for its first). */
export async function nextStepOrder(tx: Database, accountId: string, funnelId: string): Promise<number> {
  const [row] = await tx
    .select({ last: max(funnelSteps.order) })
    .from(funnelSteps)
    .where(ofFunnel(accountId, funnelId))
  return row?.last === null || row?.last === undefined ? 0 : row.last + 1
}

export async function insertStep(
  tx: Database,
  values: Omit<typeof funnelSteps.$inferInsert, 'id'>,
): Promise<StepRow> {
  const [row] = await tx.insert(funnelSteps).values(values).returning()
  return row as StepRow
}

/** What a step update sets; `seo` and `trackingCode` are merged into the stored objects, field by field. */
export type StepChanges = Partial<
  Pick<StepRow, 'name' | 'path' | 'seo' | 'trackingCode' | 'css' | 'externalFonts'>
>

// Merged by the database, so that two updates of different fields do not undo each other.
const merged = (column: typeof funnelSteps.seo | typeof funnelSteps.trackingCode, changes: object) =>
  sql`${column} || ${JSON.stringify(changes)}::jsonb`

export async function updateStepRow(
  tx: Database,
  accountId: string,
  stepId: string,
  { seo, trackingCode, ...changes }: StepChanges,
): Promise<StepRow | undefined> {
  const [row] = await tx
    .update(funnelSteps)
    .set({
      ...changes,
      ...(seo && { seo: merged(funnelSteps.seo, seo) }),
      ...(trackingCode && { trackingCode: merged(funnelSteps.trackingCode, trackingCode) }),
      updatedAt: new Date(),
    })
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.id, stepId)))
    .returning()
  return row
}

/** The step of the funnel at `path`. */
export async function findStepAtPath(db: Database, accountId: string, funnelId: string, path: string) {
  const [row] = await db
    .select({ _id: funnelSteps.id, name: funnelSteps.name })
    .from(funnelSteps)
    .where(and(ofFunnel(accountId, funnelId), eq(funnelSteps.path, path)))
  return row
}

export async function findStepPaths(tx: Database, accountId: string, funnelId: string): Promise<string[]> {
  const rows = await tx
    .select({ path: funnelSteps.path })
    .from(funnelSteps)
    .where(ofFunnel(accountId, funnelId))
  return rows.map((row) => row.path)
}

/** The funnel's steps in their order. */
export function findStepOrders(db: Database, accountId: string, funnelId: string) {
  return db
    .select({ _id: funnelSteps.id, name: funnelSteps.name, order: funnelSteps.order })
    .from(funnelSteps)
    .where(ofFunnel(accountId, funnelId))
    .orderBy(asc(funnelSteps.order), asc(funnelSteps.id))
}

/**
 * Sets the order of each listed step of the funnel in one statement (`UPDATE … FROM (VALUES …)`); the ids
 * of the steps it changed. A listed id that is not a step of the funnel changes nothing.
 */
export async function updateStepOrders(
  tx: Database,
  accountId: string,
  funnelId: string,
  orders: { step_id: string; order: number }[],
): Promise<string[]> {
  const values = sql.join(
    orders.map(({ step_id, order }) => sql`(${step_id}::text, ${order}::integer)`),
    sql`, `,
  )
  const result = await tx.execute(sql`
    update ${funnelSteps} set "order" = v.step_order
    from (values ${values}) as v(step_id, step_order)
    where ${funnelSteps.accountId} = ${accountId} and ${funnelSteps.funnelId} = ${funnelId}
      and ${funnelSteps.id} = v.step_id
    returning ${funnelSteps.id}`)
  return rowsOf<{ id: string }>(result).map((row) => row.id)
}

export async function deleteStepRow(
  tx: Database,
  accountId: string,
  funnelId: string,
  stepId: string,
): Promise<boolean> {
  const rows = await tx
    .delete(funnelSteps)
    .where(and(ofFunnel(accountId, funnelId), eq(funnelSteps.id, stepId)))
    .returning({ id: funnelSteps.id })
  return rows.length === 1
}

/** Numbers the funnel's steps 0..n-1 in their present order, in one statement. */
export async function renumberSteps(tx: Database, accountId: string, funnelId: string): Promise<void> {
  await tx.execute(sql`
    update ${funnelSteps} set "order" = r.position
    from (
      select id, (row_number() over (order by "order", id))::integer - 1 as position
      from ${funnelSteps}
      where ${funnelSteps.accountId} = ${accountId} and ${funnelSteps.funnelId} = ${funnelId}
    ) as r
    where ${funnelSteps.accountId} = ${accountId} and ${funnelSteps.id} = r.id
      and ${funnelSteps.order} <> r.position`)
}
