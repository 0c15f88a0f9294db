import { type Static, Type } from '@sinclair/typebox'
import { Id, Integer, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { MESSAGE_KINDS } from './tables.js'

export const MAX_MESSAGE_LENGTH = 10_000

/** A room message as members see it. `kind` is `system` for the notes the service posts about changes. */
export const Message = Type.Object(
  {
    _id: Id(),
    room_id: Id(),
    sender_id: Id({
      description: 'Conversation id of the sender (of the member who made the change, for system)',
    }),
    kind: StringEnum(MESSAGE_KINDS),
    content: Type.String(),
    created_at: Timestamp(),
    edited_at: Type.Union([Timestamp(), Type.Null()]),
  },
  { title: 'RoomMessage' },
)
export type Message = Static<typeof Message>

export const RoomParams = Type.Object({ roomId: Type.String({ description: 'The room id' }) })
export const MessageParams = Type.Object({
  roomId: Type.String({ description: 'The room id' }),
  messageId: Type.String({ description: 'The message id' }),
})

export const MessageBody = Type.Object(
  {
    content: Type.String({
      minLength: 1,
      maxLength: MAX_MESSAGE_LENGTH,
      pattern: '\\S',
      description: `1 to ${MAX_MESSAGE_LENGTH.toLocaleString('en')} characters, not only white space`,
    }),
  },
  { title: 'RoomMessageInput' },
)
export type MessageBody = Static<typeof MessageBody>

export const MessageSent = Type.Object(
  { success: Type.Literal(true), message: Message },
  { title: 'RoomMessageSent' },
)

export const MESSAGE_PAGE_DEFAULT = 50
export const MESSAGE_PAGE_MAX = 100

export const MessageListQuery = Type.Object({
  before: Type.Optional(Id({ description: 'Only messages older than this message of the room' })),
  after: Type.Optional(
    Id({ description: 'Only messages newer than this message of the room: the ones right after it' }),
  ),
  limit: Integer({ minimum: 1, maximum: MESSAGE_PAGE_MAX, default: MESSAGE_PAGE_DEFAULT }),
})
export type MessageListQuery = Static<typeof MessageListQuery>

export const MessageList = Type.Object(
  {
    messages: Type.Array(Message, { description: 'Newest first; deleted messages are left out' }),
    has_more: Type.Boolean({
      description: 'More messages lie beyond this page: older ones, or newer ones when paging with `after`',
    }),
  },
  { title: 'RoomMessagePage' },
)
export type MessageList = Static<typeof MessageList>

export const ReadBody = Type.Object(
  {
    message_id: Id({ description: 'The newest message the caller has read' }),
  },
  { title: 'RoomReadInput' },
)

/** The spec's `last_message_read` entry of the caller, and what remains unread for them. */
export const ReadMarker = Type.Object(
  {
    success: Type.Literal(true),
    last_message_read: Type.Object({
      conversation_id: Id(),
      message_id: Type.Union([Id(), Type.Null()]),
      timestamp: Type.Union([Timestamp(), Type.Null()]),
    }),
    unread_count: Type.Integer(),
  },
  { title: 'RoomReadMarker' },
)
export type ReadMarker = Static<typeof ReadMarker>

/** A message of the reference's examples (ids and time made up), in the example room. */
export const MESSAGE_INPUT_EXAMPLE = {
  content: 'The landing page is live: please check it on your phone.',
} satisfies MessageBody

export const MESSAGE_EXAMPLE = {
  _id: '65f1c0ffee0000000000c201',
  room_id: '65f1c0ffee0000000000c001',
  sender_id: '65f1c0ffee0000000000c101',
  kind: 'user',
  content: MESSAGE_INPUT_EXAMPLE.content,
  created_at: '2025-03-14T09:05:12.000Z',
  edited_at: null,
} satisfies Message
