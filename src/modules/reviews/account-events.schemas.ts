import { type Static, Type } from '@sinclair/typebox'
import { Email, Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { TRIGGER_TYPES } from './documents.schemas.js'
import { WEBHOOK_EVENT_STATUSES } from './tables.js'

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
  { additionalProperties: false },
)
export type AccountEventBody = Static<typeof AccountEventBody>

/** A reported event as stored, and what became of it so far (`received` until its job applies it). */
export const AccountEvent = Type.Object({
  _id: Id(),
  event_id: Type.String(),
  trigger: StringEnum(TRIGGER_TYPES),
  status: StringEnum(WEBHOOK_EVENT_STATUSES),
  reason: Nullable(Type.String({ description: 'Why it was skipped or failed' })),
  created_at: Timestamp(),
  processed_at: Nullable(Timestamp()),
})
export type AccountEvent = Static<typeof AccountEvent>
