import { type Static, Type } from '@sinclair/typebox'
import {
  Email,
  FIELD_COUNT_MAX,
  FIELD_KEY_MAX_LENGTH,
  Id,
  NAME_MAX_LENGTH,
  StringEnum,
  SUBJECT_MAX_LENGTH,
  TEXT_MAX_LENGTH,
  Text,
  URL_MAX_LENGTH,
} from '../../platform/http/schemas.js'

/**
 * The longest content value: the send route's body limit (send.routes.ts), which bounds it anyway. An email's
 * HTML may be large (inline images, long newsletters), so nothing short of what the route takes is refused.
 */
export const CONTENT_MAX_LENGTH = 30 * 1024 * 1024

export const Address = Type.Object(
  {
    email: Email(),
    name: Type.Optional(Text(NAME_MAX_LENGTH)),
  },
  { title: 'EmailAddress' },
)
export type Address = Static<typeof Address>

export const Recipient = Type.Object(
  {
    ...Address.properties,
    recipient_id: Type.Optional(Id({ description: 'Contact id, for tracking' })),
  },
  { title: 'Recipient' },
)
export type Recipient = Static<typeof Recipient>

export const SendBody = Type.Object(
  {
    subject: Text(SUBJECT_MAX_LENGTH, { description: 'May contain {{variable}} placeholders' }),
    sender: Address,
    recipients: Type.Array(Recipient, { minItems: 1 }),
    cc: Type.Optional(Type.Array(Recipient)),
    bcc: Type.Optional(Type.Array(Recipient)),
    reply_to: Type.Optional(Address),
    content: Type.Optional(
      Type.Array(
        Type.Object({ type: StringEnum(['text/html', 'text/plain']), value: Text(CONTENT_MAX_LENGTH) }),
        {
          minItems: 1,
        },
      ),
    ),
    // A label such as `campaign`, or the address of the page the mail was sent from.
    origin: Text(URL_MAX_LENGTH),
    // SendGrid's template ids are `d-` and 32 hex characters.
    template_id: Type.Optional(Text(NAME_MAX_LENGTH, { minLength: 1 })),
    // Any JSON per variable (a template may loop over a list), so only its names and their count are bounded.
    dynamic_template_data: Type.Optional(
      Type.Record(Type.String(), Type.Unknown(), {
        propertyNames: { maxLength: FIELD_KEY_MAX_LENGTH },
        maxProperties: FIELD_COUNT_MAX,
      }),
    ),
    person_id: Type.Optional(Id()),
    business_id: Type.Optional(Id()),
    instasite_id: Type.Optional(Id()),
    instareport_id: Type.Optional(Id()),
    fallback_values: Type.Optional(
      Text(TEXT_MAX_LENGTH, { description: 'A JSON object, keyed by variable name' }),
    ),
  },
  { title: 'OutgoingEmail' },
)
export type SendBody = Static<typeof SendBody>

/** A file part named `attachments` of a multipart send. */
export interface UploadedAttachment {
  filename: string
  type: string
  data: Buffer
}

/** The spec's outgoing email request, attachments as uploaded files. */
export type SendEmailInput = SendBody & { attachments: UploadedAttachment[] }

export const SendHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      description:
        'Sends once per key and account: a retry gets the first send back (header Idempotent-Replayed: true), uncharged',
    }),
  ),
})

/* An example of the API reference (test/openapi-reference.test.ts checks it against its schema). */
export const OUTGOING_EMAIL_EXAMPLE = {
  subject: 'See you on Monday, {{contact.first_name}}',
  sender: { email: 'hello@acme-dental.example.com', name: 'Acme Dental' },
  recipients: [{ email: 'ada@example.com', name: 'Ada Lovelace' }],
  content: [
    { type: 'text/html', value: '<p>Hi {{contact.first_name}}, your check-up is on Monday at 9:00.</p>' },
  ],
  origin: 'https://app.example.com/conversations',
} satisfies SendBody
