import { type Static, Type } from '@sinclair/typebox'
import { PageQuery } from '../../platform/http/pagination.js'
import {
  Id,
  LABEL_MAX_LENGTH,
  PHONE_MAX_LENGTH,
  TEXT_MAX_LENGTH,
  Text,
  Timestamp,
} from '../../platform/http/schemas.js'

/** A number that replied STOP to the account's review SMS: not texted again until it replies START. */
export const SmsOptOut = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    phone: Type.String({ description: "The customer's number: digits and '+'" }),
    keyword: Type.String({ description: 'The opt-out keyword it replied with (STOP, UNSUBSCRIBE, ...)' }),
    created_at: Timestamp(),
  },
  { title: 'SmsOptOut' },
)
export type SmsOptOut = Static<typeof SmsOptOut>

/** The longest phone number kept for a customer (the API's one bound of a phone), as the scheduler reads it. */
export { PHONE_MAX_LENGTH }

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
    // Twilio's sids are 34 characters, a message at most 1,600.
    MessageSid: Type.Optional(Text(LABEL_MAX_LENGTH)),
    AccountSid: Type.Optional(Text(LABEL_MAX_LENGTH)),
    From: Type.Optional(Text(PHONE_MAX_LENGTH, { description: "The customer's number" })),
    To: Type.Optional(Text(PHONE_MAX_LENGTH, { description: 'The number the customer replied to' })),
    Body: Type.Optional(
      Text(TEXT_MAX_LENGTH, {
        description: 'STOP, STOPALL, UNSUBSCRIBE, CANCEL, END, QUIT; START, UNSTOP, YES',
      }),
    ),
  },
  { title: 'TwilioInboundSms', description: 'Signed: header X-Twilio-Signature (TWILIO_AUTH_TOKEN)' },
)
export type InboundSmsBody = Static<typeof InboundSmsBody>
