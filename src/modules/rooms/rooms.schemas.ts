import { type Static, type TSchema, Type } from '@sinclair/typebox'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { ROOM_ROLES, ROOM_TYPES } from './tables.js'

/** A room id as callers send it: anything that is not one of the account's rooms is `Room does not exist`. */
export const RoomId = () => Type.String({ maxLength: 64, description: 'The room _id' })
/** A chat identity (`conversation.id`) as callers send it; checked against the account's identities. */
const ConversationId = () => Type.String({ maxLength: 64, description: 'A chat identity (conversation id)' })
export const ConversationIds = (options: { minItems?: number } = {}) =>
  Type.Array(ConversationId(), { maxItems: 500, ...options })

export const LastMessage = Nullable(
  Type.Object(
    { content: Type.String(), created_at: Timestamp(), sender_id: Id() },
    { title: 'RoomLastMessage' },
  ),
)

/** A current member of a room (the spec's `members` entry). */
const RoomMember = Type.Object({ conversation_id: Id(), joined_at: Timestamp() }, { title: 'RoomMember' })

/** The spec's Room, as its members see it (per-member state such as favorites is each caller's own). */
export const Room = Type.Object(
  {
    _id: Id(),
    type: StringEnum(ROOM_TYPES),
    name: Nullable(Type.String()),
    owner: Id(),
    roles: Type.Array(Type.Object({ conversation_id: Id(), type: StringEnum(ROOM_ROLES) })),
    members: Type.Array(RoomMember),
    all_members: Type.Array(
      Type.Object({ conversation_id: Id(), joined_at: Timestamp(), left_at: Type.Optional(Timestamp()) }),
    ),
    last_message: LastMessage,
    last_activity: Timestamp(),
    account_id: Id(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'Room' },
)
export type Room = Static<typeof Room>

export const CreateBody = Type.Object(
  {
    type: StringEnum(ROOM_TYPES),
    conversation_ids: ConversationIds(),
    room_name: Type.Optional(Type.String({ maxLength: 200, description: 'Required for group rooms' })),
  },
  { title: 'RoomInput' },
)
export type CreateBody = Static<typeof CreateBody>

export const RoomParams = Type.Object({ roomId: RoomId() })

export const RoomIdQuery = Type.Object({ roomId: RoomId() })

export const RenameBody = Type.Object(
  {
    roomId: RoomId(),
    name: Type.String({ minLength: 1, maxLength: 200 }),
  },
  { title: 'RoomRename' },
)

export const SNOOZE_PRESETS = { '30m': 30, '1h': 60, '8h': 8 * 60, '24h': 24 * 60 } as const
export type SnoozePreset = keyof typeof SNOOZE_PRESETS

export const SnoozeBody = Type.Object(
  {
    time: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 8.64e15, description: 'A custom end: Unix time in milliseconds' }),
    ),
    preset: Type.Optional(
      StringEnum(Object.keys(SNOOZE_PRESETS) as SnoozePreset[], {
        description: 'A preset duration from now: 30 minutes, 1 hour, 8 hours or 24 hours',
      }),
    ),
  },
  { title: 'RoomSnooze' },
)
export type SnoozeBody = Static<typeof SnoozeBody>

/** `{ success: true, ...fields }`: the rooms area's own success bodies. */
export const Success = <T extends Record<string, TSchema>>(title: string, fields: T) =>
  Type.Object({ success: Type.Literal(true), ...fields }, { title })

export const FavoriteResponse = Success('RoomFavoriteToggled', {
  room: Type.Object({ _id: Id(), name: Nullable(Type.String()), is_favorite: Type.Boolean() }),
})
export const Done = Success('RoomDone', { message: Type.String() })
export const RoomResponse = Success('RoomAnswer', { room: Room })
export const RenameResponse = Success('RoomRenamed', {
  room: Type.Object({ _id: Id(), name: Type.String(), updated_at: Timestamp() }),
})
export const SnoozeResponse = Success('RoomSnoozed', {
  room: Type.Object({
    _id: Id(),
    snoozed_until: Type.Object({ conversation_id: Id(), time: Type.Integer() }),
  }),
})

/** A group room of the reference's examples (ids and times made up): its owner and two members. */
export const CREATE_EXAMPLE = {
  type: 'group',
  conversation_ids: ['65f1c0ffee0000000000c102', '65f1c0ffee0000000000c103'],
  room_name: 'Launch team',
} satisfies CreateBody

const JOINED = '2025-03-14T09:00:00.000Z'

export const ROOM_EXAMPLE = {
  _id: '65f1c0ffee0000000000c001',
  type: 'group',
  name: 'Launch team',
  owner: '65f1c0ffee0000000000c101',
  roles: [
    { conversation_id: '65f1c0ffee0000000000c101', type: 'owner' },
    { conversation_id: '65f1c0ffee0000000000c102', type: 'member' },
    { conversation_id: '65f1c0ffee0000000000c103', type: 'member' },
  ],
  members: [
    { conversation_id: '65f1c0ffee0000000000c101', joined_at: JOINED },
    { conversation_id: '65f1c0ffee0000000000c102', joined_at: JOINED },
    { conversation_id: '65f1c0ffee0000000000c103', joined_at: JOINED },
  ],
  all_members: [
    { conversation_id: '65f1c0ffee0000000000c101', joined_at: JOINED },
    { conversation_id: '65f1c0ffee0000000000c102', joined_at: JOINED },
    { conversation_id: '65f1c0ffee0000000000c103', joined_at: JOINED },
  ],
  last_message: null,
  last_activity: JOINED,
  account_id: '65f1c0ffee0000000000a001',
  created_at: JOINED,
  updated_at: JOINED,
} satisfies Room
