import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, StringEnum } from '../../platform/http/schemas.js'
import { StepSeo, StepTrackingCode } from './documents.schemas.js'
import { FunnelId } from './funnel-access.schemas.js'

/** The largest step HTML the edge may send back: the POST route's body limit. */
export const MAX_STEP_HTML_BYTES = 5 * 1024 * 1024

const Signature = {
  _sig: Type.String({ maxLength: 64, description: 'Lowercase hex HMAC-SHA256 (see ARCHITECTURE.md)' }),
  _ts: Integer({ minimum: 0, maximum: 99_999_999_999, description: 'Unix seconds; 300 s either way' }),
}

export const EdgeStepQuery = Type.Object({
  hostname: Type.String({ minLength: 1, maxLength: 253, description: "The funnel's domain name" }),
  pathname: Type.String({ maxLength: 2048, description: "The step's full path: base path, then step path" }),
  funnel_id: Type.Optional(FunnelId({ description: 'That funnel, whatever the host' })),
  isPreview: Type.Optional(Type.Boolean({ description: 'Also serves inactive and draft funnels' })),
  ...Signature,
})
export type EdgeStepQuery = Static<typeof EdgeStepQuery>

/** The spec's edge step: what a published page is built from. */
export const EdgeStep = Type.Object(
  {
    step_id: Id(),
    funnel_id: Id(),
    html: Type.String(),
    checksum: Type.Union([Type.String(), Type.Null()], { description: 'Null until the edge first syncs' }),
    seo: StepSeo,
    tracking_code: StepTrackingCode,
    css: Type.String(),
  },
  { title: 'EdgeStep' },
)
export type EdgeStep = Static<typeof EdgeStep>

export const SYNC_REASONS = ['UPDATED', 'NO_CHANGE', 'NOT_FOUND', 'CONFLICT'] as const
export type SyncReason = (typeof SYNC_REASONS)[number]

export const StepSyncBody = Type.Object(
  {
    step_id: Id(),
    html: Type.String({ maxLength: MAX_STEP_HTML_BYTES }),
    newHash: Type.String({ minLength: 1, maxLength: 256 }),
    currentHash: Type.Optional(
      Type.Union([Type.String({ maxLength: 256 }), Type.Null()], {
        description: 'The hash the edge last read; absent or null for a step never synced',
      }),
    ),
    skipIfUnchanged: Type.Optional(Type.Boolean({ default: false })),
    ...Signature,
  },
  { title: 'StepSyncInput' },
)
export type StepSyncBody = Static<typeof StepSyncBody>

export const StepSyncData = Type.Object(
  {
    step_id: Id(),
    updated: Type.Boolean(),
    reason: StringEnum(SYNC_REASONS),
    checksum: Type.Union([Type.String(), Type.Null()], { description: 'The stored hash after the call' }),
  },
  { title: 'StepSyncData' },
)
export type StepSyncData = Static<typeof StepSyncData>

/** The sync's answer, success or not: `message` is the reason; NOT_FOUND and CONFLICT carry `errno`. */
export const StepSyncAnswer = Type.Object(
  {
    success: Type.Boolean(),
    errno: Type.Optional(Type.Integer()),
    message: StringEnum(SYNC_REASONS),
    data: StepSyncData,
  },
  { title: 'StepSyncAnswer' },
)
