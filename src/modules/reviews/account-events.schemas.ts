import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Email, Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { TRIGGER_TYPES } from './documents.schemas.js'
import { ReviewRequest } from './requests.schemas.js'
import { WEBHOOK_EVENT_STATUSES, WEBHOOK_SOURCES } from './tables.js'

/**
 * `POST /reviews/events`: the account's own systems report a service delivered, an appointment finished or
 * a custom event (or an order). `trigger` is checked by the service, so a wrong one answers with the spec's
 * 'Invalid trigger type'.
 */
export const AccountEventBody = Type.Object(
  {
    trigger: Type.String({ maxLength: 100, description: TRIGGER_TYPES.join(', ') }),
    event_id: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'Your id of the event: a repeated one is answered with the stored event, applied once',
    }),
    customer: Type.Object(
      {
        name: Type.Optional(Type.String({ maxLength: 200 })),
        email: Type.Optional(Email()),
        phone: Type.Optional(
          Type.String({ pattern: '^\\+[1-9][0-9]{6,14}$', description: 'E.164, e.g. +14155550100' }),
        ),
      },
      { additionalProperties: false },
    ),
    order_value: Type.Optional(
      Integer({ minimum: 0, maximum: 1e12, description: 'Minor units of currency' }),
    ),
    currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: 'ISO 4217, e.g. USD' })),
  },
  { title: 'ReviewEventInput', additionalProperties: false },
)
export type AccountEventBody = Static<typeof AccountEventBody>

/**
 * One of the account's review events: those it reported (`POST /reviews/events`) and the payment and order
 * webhooks attributed to it, with what became of each.
 */
export const AccountEvent = Type.Object(
  {
    _id: Id(),
    source: StringEnum(WEBHOOK_SOURCES, {
      description: 'paymentprovider (Stripe), orderprovider (Square), or account (POST /reviews/events)',
    }),
    event_id: Type.String({ description: "The source's id of the event (for your own events, yours)" }),
    type: Type.String({
      description: "The source's kind of event (charge.succeeded, order.updated, …; your own: the trigger)",
    }),
    trigger: Nullable(
      StringEnum(TRIGGER_TYPES, {
        description:
          'The trigger it counts as: payments and orders order_completed; a refund or another kind none',
      }),
    ),
    status: StringEnum(WEBHOOK_EVENT_STATUSES, {
      description: 'received (waiting to be applied), processed (it scheduled requests), skipped or failed',
    }),
    reason: Nullable(
      Type.String({
        description: 'Why it was skipped or failed, as a code (trigger_mismatch, below_min_order_value, …)',
      }),
    ),
    reason_text: Nullable(
      Type.String({
        description: 'The same reason in words, with the values that decided it, and what to do',
      }),
    ),
    created_at: Timestamp(),
    processed_at: Nullable(Timestamp()),
  },
  { title: 'ReviewEvent' },
)
export type AccountEvent = Static<typeof AccountEvent>

/** One event, as it was received, with the review requests it scheduled. */
export const AccountEventDetail = Type.Composite(
  [
    AccountEvent,
    Type.Object({
      payload: Type.Unknown({
        description: 'The event as received (of a payment or order, the object it names)',
      }),
      requests: Type.Array(ReviewRequest),
    }),
  ],
  { title: 'ReviewEventDetail' },
)
export type AccountEventDetail = Static<typeof AccountEventDetail>

/** `GET /reviews/events`: newest first, by status, trigger and the time received. */
export const EventsQuery = Type.Composite([
  CursorPageQuery(20, 100),
  Type.Object({
    status: Type.Optional(StringEnum(WEBHOOK_EVENT_STATUSES)),
    trigger: Type.Optional(StringEnum(TRIGGER_TYPES)),
    from: Type.Optional(Timestamp()),
    to: Type.Optional(Timestamp()),
  }),
])
export type EventsQuery = Static<typeof EventsQuery>

/** An event of the reference's examples (ids and time made up): a visit the account's own system reports. */
export const EVENT_INPUT_EXAMPLE = {
  trigger: 'service_delivered',
  event_id: 'visit-2025-03-14-0042',
  customer: { name: 'Ada Lovelace', email: 'ada@example.com', phone: '+14155550100' },
} satisfies AccountEventBody

export const EVENT_EXAMPLE = {
  _id: '65f1c0ffee0000000000e201',
  source: 'account',
  event_id: EVENT_INPUT_EXAMPLE.event_id,
  type: 'service_delivered',
  trigger: 'service_delivered',
  status: 'received',
  reason: null,
  reason_text: null,
  created_at: '2025-03-14T10:02:17.000Z',
  processed_at: null,
} satisfies AccountEvent
