import { type Static, Type } from '@sinclair/typebox'
import { StringEnum } from '../../platform/http/schemas.js'

/** The spec's `trigger` values. */
export const TRIGGER_TYPES = [
  'order_completed',
  'service_delivered',
  'appointment_finished',
  'custom_event',
] as const
export type TriggerType = (typeof TRIGGER_TYPES)[number]

/**
 * The one trigger payments and orders count as: a succeeded payment or a COMPLETED order is an order
 * completed, never a service delivered or an appointment finished (a deliberate difference, docs/decisions.md).
 */
export const ORDER_TRIGGER: TriggerType = 'order_completed'

/** The spec's `platforms` values: the review sites. */
export const REVIEW_PLATFORMS = ['google', 'facebook', 'yelp', 'trustpilot'] as const
export type ReviewPlatform = (typeof REVIEW_PLATFORMS)[number]

export const SEND_METHODS = ['email', 'sms', 'both'] as const
export type SendMethod = (typeof SEND_METHODS)[number]

export const TEMPLATE_CHANNELS = ['email', 'sms'] as const
export type TemplateChannel = (typeof TEMPLATE_CHANNELS)[number]

export const CUSTOMER_SEGMENTS = ['all', 'vip', 'new'] as const

/** The spec's `conditions`, field by field. `min_order_value` is in minor units of the order's currency. */
export const ReviewConditions = Type.Object(
  {
    min_order_value: Type.Optional(Type.Number({ minimum: 0, maximum: 1e12 })),
    exclude_refunded: Type.Optional(Type.Boolean()),
    customer_segment: Type.Optional(StringEnum(CUSTOMER_SEGMENTS)),
    exclude_repeated: Type.Optional(Type.Boolean()),
  },
  { title: 'ReviewConditions', additionalProperties: false },
)
export type ReviewConditions = Static<typeof ReviewConditions>

/** The longest delay a request or its follow-up may wait: a year. */
export const MAX_DELAY_HOURS = 8760

/** One reminder `delay_hours` after the request was sent, unless the customer clicked meanwhile. */
export const FollowUp = Type.Object(
  {
    enabled: Type.Boolean(),
    delay_hours: Type.Number({ exclusiveMinimum: 0, maximum: MAX_DELAY_HOURS }),
  },
  { title: 'ReviewFollowUp', additionalProperties: false },
)
export type FollowUp = Static<typeof FollowUp>

const CLOCK_TIME = '^([01][0-9]|2[0-3]):[0-5][0-9]$'

/** Hours of the day, in the configuration's time zone, when requests may be sent. */
export const SendWindow = Type.Object(
  {
    start: Type.String({ pattern: CLOCK_TIME, description: 'HH:MM, 24-hour clock' }),
    end: Type.String({
      pattern: CLOCK_TIME,
      description: 'HH:MM, 24-hour clock; before start spans midnight',
    }),
  },
  { title: 'ReviewSendWindow', additionalProperties: false },
)
export type SendWindow = Static<typeof SendWindow>
