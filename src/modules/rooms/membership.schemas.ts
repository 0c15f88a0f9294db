import { Type } from '@sinclair/typebox'
import { Id, StringEnum } from '../../platform/http/schemas.js'
import { ConversationIds, Room, RoomId, Success } from './rooms.schemas.js'

const Target = () => Type.String({ maxLength: 64, description: 'The member (conversation id)' })

export const AddMembersBody = Type.Object(
  {
    roomId: RoomId(),
    conversation_ids: ConversationIds({ minItems: 1 }),
  },
  { title: 'RoomMembersInput' },
)

export const OwnerBody = Type.Object(
  { roomId: RoomId(), conversationId: Target() },
  { title: 'RoomOwnerInput' },
)

export const ASSIGNABLE_ROLES = ['admin', 'member'] as const
export const RoleBody = Type.Object(
  {
    roomId: RoomId(),
    conversationId: Target(),
    role: StringEnum(ASSIGNABLE_ROLES),
  },
  { title: 'RoomRoleInput' },
)

export const RemoveQuery = Type.Object({ conversation_id: Target() })

export const LeaveResponse = Success('RoomLeft', {
  room: Type.Object({
    _id: Id(),
    name: Type.Union([Type.String(), Type.Null()]),
    members: Room.properties.members,
  }),
})

/** The body of the spec's refusal to remove a member: `{ error, statusCode }`, not the error envelope. */
export const RemovalRefused = Type.Object(
  { error: Type.String(), statusCode: Type.Literal(403) },
  { title: 'RoomRemovalRefused' },
)
