import { type Static, Type } from '@sinclair/typebox'
import { Email, Id, StringEnum } from '../../platform/http/schemas.js'

export const Address = Type.Object({
  email: Email(),
  name: Type.Optional(Type.String()),
})
export type Address = Static<typeof Address>

export const Recipient = Type.Object({
  ...Address.properties,
  recipient_id: Type.Optional(Id({ description: 'Contact id, for tracking' })),
})
export type Recipient = Static<typeof Recipient>

export const SendBody = Type.Object({
  subject: Type.String({ description: 'May contain {{variable}} placeholders' }),
  sender: Address,
  recipients: Type.Array(Recipient, { minItems: 1 }),
  cc: Type.Optional(Type.Array(Recipient)),
  bcc: Type.Optional(Type.Array(Recipient)),
  reply_to: Type.Optional(Address),
  content: Type.Optional(
    Type.Array(Type.Object({ type: StringEnum(['text/html', 'text/plain']), value: Type.String() }), {
      minItems: 1,
    }),
  ),
  origin: Type.String(),
  template_id: Type.Optional(Type.String({ minLength: 1 })),
  dynamic_template_data: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  person_id: Type.Optional(Id()),
  business_id: Type.Optional(Id()),
  instasite_id: Type.Optional(Id()),
  instareport_id: Type.Optional(Id()),
  fallback_values: Type.Optional(Type.String({ description: 'A JSON object, keyed by variable name' })),
})
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
