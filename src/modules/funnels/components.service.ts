import { createHash } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { NotFound } from '../../platform/http/errors.js'
import {
  type BackupRow,
  type ComponentsRow,
  findBackupOfLiveFunnel,
  findComponents,
  insertBackup,
  listBackups,
  lockStep,
  pruneBackups,
  upsertComponents,
} from './components.repository.js'
import type { StepBackup, StepBackupWithComponents, StepComponents } from './components.schemas.js'
import type { BuilderComponents } from './documents.schemas.js'
import { requireStep, STEP_NOT_FOUND } from './funnel-access.service.js'
import { type FunnelWriteDeps, inFunnelWrite } from './step-cache.js'

/** The spec's limit: only the last 10 backups of a step are kept. */
export const BACKUPS_KEPT = 10
export const COMPONENTS_NOT_FOUND = 'Components not found'
export const BACKUP_NOT_FOUND = 'Backup not found'

// Object keys sorted at every level: jsonb does not keep the order they were sent in.
const sortedKeys = (_key: string, value: unknown) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    : value

/** SHA-256 (hex) of the document's canonical JSON: equal documents, however their keys are ordered, agree. */
export function componentsChecksum(document: BuilderComponents): string {
  return createHash('sha256').update(JSON.stringify(document, sortedKeys)).digest('hex')
}

/** The row's checksum, computed when the row has none stored. */
const checksumOf = (row: ComponentsRow) => row.checksum ?? componentsChecksum(row.components)

const componentsView = (row: ComponentsRow): StepComponents => ({
  _id: row.id,
  step_id: row.stepId,
  funnel_id: row.funnelId,
  components: row.components,
  checksum: checksumOf(row),
  saved_at: row.savedAt.toISOString(),
})

const backupView = (row: Omit<BackupRow, 'accountId' | 'components'>): StepBackup => ({
  _id: row.id,
  step_id: row.stepId,
  funnel_id: row.funnelId,
  backup_date: row.backupDate.toISOString(),
  description: row.description,
  components_checksum: row.componentsChecksum,
})

/**
 * Makes `document` the step's components inside the caller's transaction: the step's row is locked, so
 * saves of one step run one at a time and the cap of backups holds; the version it replaces is backed
 * up first (described by `description`) unless it is the same document; backups beyond the newest 10 go.
 */
export async function storeComponents(
  tx: Database,
  accountId: string,
  step: { id: string; funnelId: string },
  document: BuilderComponents,
  description: string,
): Promise<ComponentsRow> {
  if (!(await lockStep(tx, accountId, step.id))) throw new NotFound(STEP_NOT_FOUND)
  const checksum = componentsChecksum(document)
  const current = await findComponents(tx, accountId, step.id)
  if (current && checksumOf(current) !== checksum) {
    await insertBackup(tx, accountId, {
      stepId: step.id,
      funnelId: step.funnelId,
      description,
      componentsChecksum: checksumOf(current),
      components: current.components,
    })
    await pruneBackups(tx, accountId, step.id, BACKUPS_KEPT)
  }
  return upsertComponents(tx, accountId, {
    stepId: step.id,
    funnelId: step.funnelId,
    components: document,
    checksum,
  })
}

/** The spec's components save: an upsert, the previous version backed up first. */
export async function saveComponents(
  deps: FunnelWriteDeps,
  accountId: string,
  funnelId: string,
  stepId: string,
  document: BuilderComponents,
): Promise<StepComponents> {
  const saved = await inFunnelWrite(deps, funnelId, async (tx) => {
    const { step } = await requireStep(tx, accountId, stepId, funnelId)
    return storeComponents(tx, accountId, step, document, 'Before save')
  })
  return componentsView(saved)
}

export async function getComponents(
  db: Database,
  accountId: string,
  funnelId: string,
  stepId: string,
): Promise<StepComponents> {
  await requireStep(db, accountId, stepId, funnelId)
  const row = await findComponents(db, accountId, stepId)
  if (!row) throw new NotFound(COMPONENTS_NOT_FOUND)
  return componentsView(row)
}

/** The step's backups, newest first, without their components. */
export async function getBackups(
  db: Database,
  accountId: string,
  funnelId: string,
  stepId: string,
): Promise<StepBackup[]> {
  await requireStep(db, accountId, stepId, funnelId)
  return (await listBackups(db, accountId, stepId)).map(backupView)
}

async function requireBackup(db: Database, accountId: string, backupId: string): Promise<BackupRow> {
  const backup = await findBackupOfLiveFunnel(db, accountId, backupId)
  if (!backup) throw new NotFound(BACKUP_NOT_FOUND)
  return backup
}

/** One backup of the account, with its full components. */
export async function getBackup(
  db: Database,
  accountId: string,
  backupId: string,
): Promise<StepBackupWithComponents> {
  const backup = await requireBackup(db, accountId, backupId)
  return { ...backupView(backup), components: backup.components }
}

/**
 * Restores a backup as its step's current components, saved like any save: what it replaces is backed
 * up first. The backup itself stays (until the cap of 10 pushes it out).
 */
export async function restoreBackup(
  deps: FunnelWriteDeps,
  accountId: string,
  backupId: string,
): Promise<StepComponents> {
  const restored = await inTransaction(deps.db, async (tx) => {
    const backup = await requireBackup(tx, accountId, backupId)
    const step = { id: backup.stepId, funnelId: backup.funnelId }
    const description = `Before rollback to the backup of ${backup.backupDate.toISOString()}`
    return storeComponents(tx, accountId, step, backup.components, description)
  })
  deps.stepCache.forgetFunnel(restored.funnelId)
  return componentsView(restored)
}
