import { type Static, Type } from '@sinclair/typebox'
import { Id, Timestamp } from '../../platform/http/schemas.js'
import { FunnelId } from './funnel-access.schemas.js'

/** A short link's code: 6 characters of 62 (digits, upper and lower case letters). */
export const CODE_PATTERN = '^[0-9A-Za-z]{6}$'
/** The longest range of days the per-day series covers in one call. */
export const MAX_SERIES_DAYS = 366

/** A funnel's id as given: a malformed one is answered with the spec's 400 `Invalid funnel ID`. */
export const ShortenQuery = Type.Object({ funnel_id: FunnelId() })

export const ShortUrl = Type.String({
  format: 'uri',
  description: '`PUBLIC_BASE_URL/s/<code>`',
  title: 'ShortUrl',
})

/** The public redirect takes any text: whatever is not a link's code is simply not found. */
export const FollowParams = Type.Object({ code: Type.String({ maxLength: 64 }) })

export const CodeParams = Type.Object({ code: Type.String({ pattern: CODE_PATTERN }) })

const Day = (description: string) =>
  Type.Optional(
    Type.String({ format: 'date', maxLength: 10, description: `${description} (YYYY-MM-DD, UTC)` }),
  )

export const StatsQuery = Type.Object({
  from: Day('First day of the series; default 29 days before `to`'),
  to: Day('Last day of the series; default today'),
})
export type StatsQuery = Static<typeof StatsQuery>

export const ShortLinkStats = Type.Object(
  {
    code: Type.String({ pattern: CODE_PATTERN }),
    short_url: ShortUrl,
    funnel_id: Id(),
    created_at: Timestamp(),
    clicks: Type.Object(
      {
        total: Type.Integer({ description: 'Every click, bots and repeats included' }),
        unique: Type.Integer({ description: 'Clicks by people, a visitor counted once an hour' }),
        bots: Type.Integer({ description: 'Clicks by crawlers and scripts' }),
      },
      { description: 'The clicks from `from` to `to`, the days of the series' },
    ),
    series: Type.Array(
      Type.Object({ date: Type.String({ format: 'date' }), clicks: Type.Integer(), unique: Type.Integer() }),
      { description: 'One entry per day from `from` to `to`, days without clicks included' },
    ),
  },
  { title: 'ShortLinkStats' },
)
export type ShortLinkStats = Static<typeof ShortLinkStats>
