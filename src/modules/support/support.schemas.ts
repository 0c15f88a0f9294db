import { type Static, Type } from '@sinclair/typebox'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { SUPPORT_MESSAGE_DIRECTIONS } from './tables.js'

export const CreateInboxBody = Type.Object(
  {
    type: Type.String({
      pattern: '^[a-z][a-z0-9_]{0,63}$',
      description: 'e.g. email_inbound: replies to sent emails arrive in the default one',
    }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    is_default: Type.Optional(Type.Boolean({ default: false })),
  },
  { title: 'SupportInboxInput' },
)
export type CreateInboxBody = Static<typeof CreateInboxBody>

export const SupportInbox = Type.Object(
  {
    _id: Id(),
    account_id: Id(),
    type: Type.String(),
    name: Type.String(),
    is_default: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'SupportInbox' },
)
export type SupportInbox = Static<typeof SupportInbox>

export const SupportConversation = Type.Object({
  _id: Id(),
  account_id: Id(),
  contact_id: Id(),
  subject: Type.String(),
  is_open: Type.Boolean(),
  created_at: Timestamp(),
})
export type SupportConversation = Static<typeof SupportConversation>

export const SupportRoom = Type.Object({
  _id: Id(),
  account_id: Id(),
  conversation_id: Id(),
  inbox_id: Type.Union([Id(), Type.Null()]),
  participants: Type.Array(Id()),
  created_at: Timestamp(),
})
export type SupportRoom = Static<typeof SupportRoom>

/** A conversation with its room (null until one is made). */
export const SupportThread = Type.Object({ ...SupportConversation.properties, room: Nullable(SupportRoom) })
export type SupportThread = Static<typeof SupportThread>

export const SupportMessage = Type.Object({
  _id: Id(),
  account_id: Id(),
  room_id: Id(),
  conversation_id: Id(),
  direction: StringEnum(SUPPORT_MESSAGE_DIRECTIONS),
  content: Type.String(),
  communication_id: Type.Union([Id(), Type.Null()]),
  msg_id: Type.Union([Type.String(), Type.Null()]),
  attachments: Type.Array(
    Type.Object({
      bucket: Type.String(),
      key: Type.String(),
      type: Type.String(),
      file_name: Type.String(),
      size: Type.Integer(),
    }),
  ),
  created_at: Timestamp(),
})
export type SupportMessage = Static<typeof SupportMessage>
