import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { REVIEW_PLATFORMS, SEND_METHODS } from './documents.schemas.js'
import { REQUEST_STATUSES } from './tables.js'

/** One customer asked for a review on one platform, and what became of it. */
export const ReviewRequest = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    /** The stored webhook event it came from (the spec's idempotency `event_id`). */
    event_id: Id(),
    source_ref: Type.String({ description: 'The payment or order it came from' }),
    customer: Type.Object({
      name: Type.String(),
      email: Nullable(Type.String()),
      phone: Nullable(Type.String()),
    }),
    platform: StringEnum(REVIEW_PLATFORMS),
    send_method: StringEnum(SEND_METHODS),
    status: StringEnum(REQUEST_STATUSES),
    reason: Nullable(Type.String({ description: 'Why it was skipped, failed or cancelled' })),
    order_value: Nullable(Type.Integer({ description: 'Minor units of currency' })),
    currency: Nullable(Type.String()),
    scheduled_for: Timestamp(),
    sent_at: Nullable(Timestamp()),
    clicked_at: Nullable(Timestamp()),
    follow_up_sent_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'ReviewRequest' },
)
export type ReviewRequest = Static<typeof ReviewRequest>

export const ListQuery = Type.Composite([
  CursorPageQuery(20, 100),
  Type.Object({
    status: Type.Optional(StringEnum(REQUEST_STATUSES)),
    platform: Type.Optional(StringEnum(REVIEW_PLATFORMS)),
    customer: Type.Optional(Type.String({ maxLength: 320, description: "The customer's email or phone" })),
    from: Type.Optional(Timestamp()),
    to: Type.Optional(Timestamp()),
  }),
])
export type ListQuery = Static<typeof ListQuery>
