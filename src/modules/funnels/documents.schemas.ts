import { type Static, Type } from '@sinclair/typebox'
import { FIELD_COUNT_MAX, FIELD_KEY_MAX_LENGTH, StringEnum } from '../../platform/http/schemas.js'

/**
 * The funnels' enums and the JSON documents their rows keep, each written once: the API validates and
 * documents them with these schemas, and tables.ts types its columns with the types derived from them
 * (this file imports no tables, so the tables can import it).
 */

export const FUNNEL_STATUSES = ['active', 'inactive', 'draft'] as const
export const FunnelStatus = StringEnum(FUNNEL_STATUSES)
export type FunnelStatus = Static<typeof FunnelStatus>

export const STEP_TYPES = ['page', 'redirect'] as const
export type StepType = (typeof STEP_TYPES)[number]

/** The spec's `live_chat_widget`. */
export const LiveChatWidget = Type.Object(
  {
    enabled: Type.Boolean(),
    provider: Type.String({ maxLength: 100 }),
    // The provider's own settings, any JSON per key: its keys and their count are bounded, its values by the body limit.
    config: Type.Object(
      {},
      {
        additionalProperties: true,
        propertyNames: { maxLength: FIELD_KEY_MAX_LENGTH },
        maxProperties: FIELD_COUNT_MAX,
      },
    ),
  },
  { title: 'LiveChatWidget' },
)
export type LiveChatWidget = Static<typeof LiveChatWidget>

const SeoText = Type.Optional(Type.String({ maxLength: 5_000 }))
const Code = Type.Optional(Type.String({ maxLength: 200_000 }))

/** The spec's step `seo`: every field an optional string. */
export const StepSeo = Type.Object(
  {
    title: SeoText,
    description: SeoText,
    keywords: SeoText,
    image: SeoText,
    robots: SeoText,
    canonical: SeoText,
  },
  { title: 'StepSeo' },
)
export type StepSeo = Static<typeof StepSeo>

/** The spec's step `tracking_code`. */
export const StepTrackingCode = Type.Object({ header: Code, footer: Code }, { title: 'StepTrackingCode' })
export type StepTrackingCode = Static<typeof StepTrackingCode>

const Settings = Type.Record(Type.String({ maxLength: 200 }), Type.Unknown())

/** One component of a builder document; its other fields (a builder's own additions) are kept as sent. */
const BuilderComponent = Type.Object(
  {
    id: Type.String({ minLength: 1, maxLength: 200 }),
    type: Type.String({ minLength: 1, maxLength: 200 }),
    settings: Settings,
    content: Settings,
  },
  { additionalProperties: true, title: 'BuilderComponent' },
)

/** The spec's builder components document: `{ version, components: [{ id, type, settings, content }] }`. */
export const BuilderComponents = Type.Object(
  {
    version: Type.String({ minLength: 1, maxLength: 50 }),
    components: Type.Array(BuilderComponent, { maxItems: 5_000 }),
  },
  { title: 'BuilderComponents' },
)
export type BuilderComponents = Static<typeof BuilderComponents>
