import { type Static, Type } from '@sinclair/typebox'
import { StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { REVIEW_PLATFORMS } from './documents.schemas.js'

/** The longest period one stats query may cover. */
export const MAX_STATS_DAYS = 366

export const StatsQuery = Type.Object(
  {
    from: Type.Optional(Timestamp()),
    to: Type.Optional(Timestamp()),
  },
  { description: 'Requests created in [from, to); default the last 30 days' },
)
export type StatsQuery = Static<typeof StatsQuery>

/** What became of the requests created in the period: how many customers were asked, and how many clicked. */
export const RequestCounts = Type.Object(
  {
    requested: Type.Integer({ description: 'Requests created' }),
    scheduled: Type.Integer({ description: 'Still waiting for their send time' }),
    sent: Type.Integer({ description: 'Sent to the customer (clicked ones included)' }),
    clicked: Type.Integer({ description: 'Sent, and the customer followed the review link' }),
    skipped: Type.Integer(),
    skipped_by_reason: Type.Record(Type.String(), Type.Integer(), {
      description: 'frequency_limit, no_review_link, opted_out, …',
    }),
    failed: Type.Integer(),
    cancelled: Type.Integer(),
    click_through_rate: Type.Number({ description: 'clicked / sent, 0 when none was sent' }),
  },
  { title: 'ReviewRequestCounts' },
)
export type RequestCounts = Static<typeof RequestCounts>

export const ReviewStats = Type.Object(
  {
    from: Timestamp(),
    to: Timestamp(),
    totals: RequestCounts,
    by_platform: Type.Array(
      Type.Composite([Type.Object({ platform: StringEnum(REVIEW_PLATFORMS) }), RequestCounts]),
    ),
    by_day: Type.Array(
      Type.Composite([
        Type.Object({
          date: Type.String({ format: 'date', description: 'The UTC day the requests were created' }),
        }),
        RequestCounts,
      ]),
    ),
  },
  { title: 'ReviewStats' },
)
export type ReviewStats = Static<typeof ReviewStats>
