import { type Static, Type } from '@sinclair/typebox'
import { Id, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { FUNNEL_STATUSES } from './documents.schemas.js'
import { FunnelId } from './funnel-access.schemas.js'
import { Step } from './steps.schemas.js'

export const PreviewQuery = Type.Object({ funnel_id: FunnelId() })
export type PreviewQuery = Static<typeof PreviewQuery>

/** The spec's funnel as previewed: its steps in order, every tracking code empty, `preview_mode: true`. */
export const FunnelPreview = Type.Object(
  {
    _id: Id(),
    name: Type.String(),
    domain_id: Type.Union([Id(), Type.Null()]),
    base_path: Type.String(),
    status: StringEnum(FUNNEL_STATUSES),
    favicon: Type.Optional(Type.String()),
    tags: Type.Array(Id()),
    steps: Type.Array(Step),
    header_tracking_code: Type.Literal(''),
    footer_tracking_code: Type.Literal(''),
    live_chat_widget: Type.Optional(
      Type.Object({
        enabled: Type.Boolean(),
        provider: Type.String(),
        config: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
    category: Type.Optional(Type.String()),
    account_id: Id(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    preview_mode: Type.Literal(true),
  },
  { title: 'FunnelPreview' },
)
export type FunnelPreview = Static<typeof FunnelPreview>
