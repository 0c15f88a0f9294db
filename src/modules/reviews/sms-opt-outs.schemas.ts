import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Timestamp } from '../../platform/http/schemas.js'

/** A number that replied STOP to the account's review SMS: not texted again until it replies START. */
export const SmsOptOut = Type.Object({
  _id: Id(),
  account_id: Id(),
  phone: Type.String({ description: "The customer's number: digits and '+'" }),
  keyword: Type.String({ description: 'The opt-out keyword it replied with (STOP, UNSUBSCRIBE, ...)' }),
  created_at: Timestamp(),
})
export type SmsOptOut = Static<typeof SmsOptOut>

/** The longest phone number kept for a customer, in any format (E.164 has 15 digits): indexes hold it. */
export const PHONE_MAX_LENGTH = 64

export const ListQuery = Type.Composite([
  PageQuery(20, 100),
  Type.Object({
    phone: Type.Optional(
      Type.String({ maxLength: PHONE_MAX_LENGTH, description: 'One number, in any format' }),
    ),
  }),
])
export type ListQuery = Static<typeof ListQuery>

/**
 * An SMS Twilio received for one of the account's numbers (its Messaging webhook, form-encoded, signed with
 * X-Twilio-Signature). Twilio sends more parameters than these, and may add some: all are signed.
 */
export const InboundSmsBody = Type.Object(
  {
    MessageSid: Type.Optional(Type.String()),
    AccountSid: Type.Optional(Type.String()),
    From: Type.Optional(Type.String({ description: "The customer's number" })),
    To: Type.Optional(Type.String({ description: 'The number the customer replied to' })),
    Body: Type.Optional(
      Type.String({ description: 'STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT; START, UNSTOP, YES' }),
    ),
  },
  { description: 'Signed: header X-Twilio-Signature (TWILIO_AUTH_TOKEN)' },
)
export type InboundSmsBody = Static<typeof InboundSmsBody>
