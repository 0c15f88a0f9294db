import { type Static, Type } from '@sinclair/typebox'
import { Id, Timestamp } from '../../platform/http/schemas.js'
import { BuilderComponents } from './documents.schemas.js'

export const SaveComponentsBody = Type.Object(
  { builderComponents: BuilderComponents },
  { title: 'StepComponentsInput' },
)
export type SaveComponentsBody = Static<typeof SaveComponentsBody>

/** The spec's step components record. */
export const StepComponents = Type.Object(
  {
    _id: Id(),
    step_id: Id(),
    funnel_id: Id(),
    components: BuilderComponents,
    checksum: Type.String(),
    saved_at: Timestamp(),
  },
  { title: 'StepComponents' },
)
export type StepComponents = Static<typeof StepComponents>

/** The spec's step backup as listed. */
export const StepBackup = Type.Object(
  {
    _id: Id(),
    step_id: Id(),
    funnel_id: Id(),
    backup_date: Timestamp(),
    description: Type.String(),
    components_checksum: Type.String(),
  },
  { title: 'StepBackup' },
)
export type StepBackup = Static<typeof StepBackup>

/** One backup as retrieved: with its full components. */
export const StepBackupWithComponents = Type.Composite(
  [StepBackup, Type.Object({ components: BuilderComponents })],
  { title: 'StepBackupWithComponents' },
)
export type StepBackupWithComponents = Static<typeof StepBackupWithComponents>

export const RollbackParams = Type.Object({ rollback_id: Id() })
