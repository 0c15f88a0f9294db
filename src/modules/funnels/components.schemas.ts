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

/** A builder save of the reference's examples (ids and time made up; the checksum is this document's). */
export const COMPONENTS_INPUT_EXAMPLE = {
  builderComponents: {
    version: '1.0',
    components: [
      {
        id: 'hero',
        type: 'heading',
        settings: { level: 1, align: 'center' },
        content: { text: 'Spring sale: 20% off' },
      },
      {
        id: 'signup',
        type: 'form',
        settings: { form_id: 'spring-optin' },
        content: { fields: ['name', 'email'], button: 'Get my coupon' },
      },
    ],
  },
} satisfies SaveComponentsBody

export const STEP_COMPONENTS_EXAMPLE = {
  _id: '65f1c0ffee0000000000f301',
  step_id: '65f1c0ffee0000000000f101',
  funnel_id: '65f1c0ffee0000000000f001',
  components: COMPONENTS_INPUT_EXAMPLE.builderComponents,
  checksum: '09cb53b42b163a927575eae874785c3bfe68f38dc0c8ab9812bf9b49d85c66a9',
  saved_at: '2025-03-14T09:31:02.000Z',
} satisfies StepComponents
