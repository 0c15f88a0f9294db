import { type Static, Type } from '@sinclair/typebox'
import { CursorPageQuery } from '../../platform/http/pagination.js'
import { Id, Integer, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { COMMUNICATION_TYPES } from './tables.js'

const SentBy = Type.Object({
  name: Type.String(),
  email: Type.String(),
  first_name: Type.String(),
  last_name: Type.String(),
  phone: Type.String(),
  image: Type.String(),
})

const AttachmentMetadata = Type.Object({
  bucket: Type.String(),
  type: Type.String(),
  file_name: Type.String(),
  size: Type.Integer({ description: 'Bytes' }),
  key: Type.String({ description: 'Object storage key' }),
})

/** One delivery event of a record, with the spec's field names. */
export const DeliveryEvent = Type.Object(
  {
    event: Type.String(),
    email: Type.String(),
    timestamp: Type.Integer({ description: 'Unix seconds' }),
    sg_event_id: Type.String(),
    sg_message_id: Nullable(Type.String()),
    account_id: Id(),
    uid: Nullable(Type.String()),
    useragent: Nullable(Type.String()),
    ip: Nullable(Type.String()),
    url: Nullable(Type.String()),
  },
  { title: 'DeliveryEvent' },
)
export type DeliveryEvent = Static<typeof DeliveryEvent>

/** The spec's Communication record; `headers` and `body` are the provider's, so their shape is open. */
export const Communication = Type.Object(
  {
    _id: Id(),
    sent_by: Type.Union([SentBy, Type.Null()]),
    origin: Type.String(),
    account_id: Id(),
    headers: Type.Record(Type.String(), Type.Unknown(), { description: 'Provider response headers' }),
    body: Type.Record(Type.String(), Type.Unknown(), {
      description: 'The provider request, attachments emptied',
    }),
    msgID: Nullable(Type.String()),
    type: StringEnum(COMMUNICATION_TYPES),
    module: Type.String({ description: 'Provider tag in upper case, e.g. SENDGRID' }),
    message_type: Type.String(),
    contact_id: Type.Array(Id()),
    conversation_id: Type.Array(Id()),
    attachments: Type.Array(AttachmentMetadata),
    success: Type.Boolean(),
    events: Type.Array(DeliveryEvent),
    delivery_status: Nullable(
      Type.String({
        description:
          'The newest delivery event by its timestamp (same second: the later step, final states last); null before any',
      }),
    ),
    from: Type.Optional(Type.String()),
    to: Type.Optional(Type.Array(Type.String())),
    subject: Type.Optional(Type.String()),
    html: Type.Optional(Type.String()),
    text: Type.Optional(Type.String()),
    referenceID: Type.Optional(Type.String()),
    createdAt: Timestamp(),
    modifiedAt: Timestamp(),
  },
  { title: 'Communication' },
)
export type Communication = Static<typeof Communication>

export const ListQuery = Type.Composite([
  CursorPageQuery(10, 100),
  Type.Object({
    contact_id: Type.Optional(Id({ description: 'Records sent to or received from this contact' })),
    conversation_id: Type.Optional(Id({ description: 'Records threaded into this conversation' })),
    type: Type.Optional(StringEnum(COMMUNICATION_TYPES)),
  }),
])

export const AttachmentParams = Type.Object({
  id: Id(),
  index: Integer({ minimum: 0, description: "Position in the record's `attachments`, from 0" }),
})

/* An example of the API reference (test/openapi-reference.test.ts checks it against its schema). */
export const COMMUNICATION_EXAMPLE = {
  _id: '65f1c0ffee0000000000d001',
  sent_by: null,
  origin: 'https://app.example.com/conversations',
  account_id: '65f1c0ffee0000000000a001',
  headers: { 'X-Account-ID': '65f1c0ffee0000000000a001', 'X-User-ID': '65f1c0ffee0000000000b001' },
  body: { subject: 'See you on Monday, Ada' },
  msgID: 'W5JfVh1pT8mI0c2tL8J3sA',
  type: 'OUTGOING',
  module: 'sendgrid',
  message_type: 'EMAIL',
  contact_id: ['65f1c0ffee0000000000c001'],
  conversation_id: ['65f1c0ffee0000000000e001'],
  attachments: [],
  success: true,
  events: [],
  delivery_status: null,
  createdAt: '2026-03-01T10:00:00.000Z',
  modifiedAt: '2026-03-01T10:00:00.000Z',
} satisfies Communication
