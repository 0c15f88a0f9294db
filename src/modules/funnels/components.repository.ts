import { and, desc, eq, notInArray, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { funnelStepBackups, funnelStepComponents, funnelSteps, funnels } from './tables.js'

export type ComponentsRow = typeof funnelStepComponents.$inferSelect
export type BackupRow = typeof funnelStepBackups.$inferSelect

// The time of the statement, not of the transaction: a save that waited for another's lock is dated after it.
const now = sql`clock_timestamp()`

/** Locks the step's row for the rest of the transaction (saves of one step run one at a time); false when gone. */
export async function lockStep(tx: Database, accountId: string, stepId: string): Promise<boolean> {
  const rows = await tx
    .select({ id: funnelSteps.id })
    .from(funnelSteps)
    .where(and(eq(funnelSteps.accountId, accountId), eq(funnelSteps.id, stepId)))
    .for('update')
  return rows.length === 1
}

export async function findComponents(db: Database, accountId: string, stepId: string) {
  const [row] = await db
    .select()
    .from(funnelStepComponents)
    .where(and(eq(funnelStepComponents.accountId, accountId), eq(funnelStepComponents.stepId, stepId)))
  return row
}

/** Inserts the step's components, or replaces the ones it has (one row per step). */
export async function upsertComponents(
  tx: Database,
  accountId: string,
  values: Pick<ComponentsRow, 'stepId' | 'funnelId' | 'components' | 'checksum'>,
): Promise<ComponentsRow> {
  const [row] = await tx
    .insert(funnelStepComponents)
    .values({ ...values, accountId, savedAt: now })
    .onConflictDoUpdate({
      target: [funnelStepComponents.accountId, funnelStepComponents.stepId],
      set: { components: values.components, checksum: values.checksum, savedAt: now },
    })
    .returning()
  return row as ComponentsRow
}

export async function insertBackup(
  tx: Database,
  accountId: string,
  values: Pick<BackupRow, 'stepId' | 'funnelId' | 'description' | 'componentsChecksum' | 'components'>,
): Promise<void> {
  await tx.insert(funnelStepBackups).values({ ...values, accountId, backupDate: now })
}

const newestFirst = [desc(funnelStepBackups.backupDate), desc(funnelStepBackups.id)]

/** Deletes the step's backups beyond the newest `keep`. */
export async function pruneBackups(tx: Database, accountId: string, stepId: string, keep: number) {
  const ofStep = and(eq(funnelStepBackups.accountId, accountId), eq(funnelStepBackups.stepId, stepId))
  const kept = tx
    .select({ id: funnelStepBackups.id })
    .from(funnelStepBackups)
    .where(ofStep)
    .orderBy(...newestFirst)
    .limit(keep)
  await tx.delete(funnelStepBackups).where(and(ofStep, notInArray(funnelStepBackups.id, kept)))
}

/** The step's backups without their components, newest first. */
export function listBackups(db: Database, accountId: string, stepId: string) {
  return db
    .select({
      id: funnelStepBackups.id,
      stepId: funnelStepBackups.stepId,
      funnelId: funnelStepBackups.funnelId,
      backupDate: funnelStepBackups.backupDate,
      description: funnelStepBackups.description,
      componentsChecksum: funnelStepBackups.componentsChecksum,
    })
    .from(funnelStepBackups)
    .where(and(eq(funnelStepBackups.accountId, accountId), eq(funnelStepBackups.stepId, stepId)))
    .orderBy(...newestFirst)
}

/** A backup of the account whose funnel is live (a soft-deleted funnel's steps are inaccessible). */
export async function findBackupOfLiveFunnel(db: Database, accountId: string, backupId: string) {
  const [row] = await db
    .select({ backup: funnelStepBackups })
    .from(funnelStepBackups)
    .innerJoin(
      funnels,
      and(eq(funnels.accountId, funnelStepBackups.accountId), eq(funnels.id, funnelStepBackups.funnelId)),
    )
    .where(
      and(
        eq(funnelStepBackups.accountId, accountId),
        eq(funnelStepBackups.id, backupId),
        eq(funnels.accountId, accountId),
        eq(funnels.deleted, false),
      ),
    )
  return row?.backup
}
