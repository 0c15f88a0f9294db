import { type Static, Type } from '@sinclair/typebox'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { BuilderComponents, STEP_TYPES, StepSeo, StepTrackingCode } from './documents.schemas.js'
import { FunnelId, StepOrder } from './funnel-access.schemas.js'

export const StepParams = Type.Object({ id: FunnelId(), step_id: Id() })
export const StepIdParams = Type.Object({ step_id: Id() })

const Name = Type.String({ minLength: 1, maxLength: 200 })
const Path = Type.String({ maxLength: 500, description: 'Stored lower case, with one leading slash' })

/** The spec's funnel step, and the fonts its page loads. */
export const Step = Type.Object(
  {
    _id: Id(),
    funnel_id: Id(),
    name: Type.String(),
    path: Type.String(),
    type: StringEnum(STEP_TYPES),
    order: Type.Integer(),
    html: Type.Optional(Type.String()),
    seo: StepSeo,
    tracking_code: StepTrackingCode,
    css: Type.Optional(Type.String()),
    external_fonts: Type.Array(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'FunnelStep' },
)
export type Step = Static<typeof Step>

export const CreateStepBody = Type.Object(
  {
    stepInfo: Type.Object({
      name: Name,
      path: Path,
      type: Type.Optional(StringEnum(STEP_TYPES, { default: 'page' })),
      order: Type.Optional(StepOrder('After the last step when not given')),
    }),
  },
  { title: 'FunnelStepInput' },
)
export type CreateStepBody = Static<typeof CreateStepBody>

/** A step's own fields a save or the page settings change; each optional. */
const StepDetails = Type.Object(
  { name: Type.Optional(Name), path: Type.Optional(Path) },
  { title: 'FunnelStepDetails' },
)

const FontUrl = Type.String({ format: 'uri', pattern: '^https?://', maxLength: 2_000 })

export const UpdateStepBody = Type.Object(
  {
    stepInfo: Type.Optional(StepDetails),
    builderComponents: Type.Optional(BuilderComponents),
    externalFonts: Type.Optional(Type.Array(FontUrl, { maxItems: 50 })),
  },
  { title: 'FunnelStepSave' },
)
export type UpdateStepBody = Static<typeof UpdateStepBody>

export const StepSettingsBody = Type.Object(
  {
    details: Type.Optional(StepDetails),
    seo: Type.Optional(StepSeo),
    tracking_code: Type.Optional(StepTrackingCode),
    css: Type.Optional(Type.String({ maxLength: 1_000_000 })),
  },
  { title: 'FunnelStepSettings' },
)
export type StepSettingsBody = Static<typeof StepSettingsBody>

export const StepOrdersBody = Type.Object(
  {
    orders: Type.Array(Type.Object({ step_id: Id(), order: StepOrder() }), {
      minItems: 1,
      maxItems: 1_000,
    }),
  },
  { title: 'StepOrdersInput' },
)
export type StepOrdersBody = Static<typeof StepOrdersBody>

export const StepOrders = Type.Object(
  {
    _id: Id(),
    steps: Type.Array(Type.Object({ _id: Id(), name: Type.String(), order: Type.Integer() })),
  },
  { title: 'StepOrders' },
)
export type StepOrders = Static<typeof StepOrders>
