import { type Static, Type } from '@sinclair/typebox'
import { PaginationSchema } from '../../platform/http/envelope.js'
import { PageQuery } from '../../platform/http/pagination.js'
import { Id, Nullable, StringEnum, Timestamp } from '../../platform/http/schemas.js'
import { LastMessage } from './rooms.schemas.js'
import { ROOM_ROLES, ROOM_TYPES } from './tables.js'

export const ROOM_LIST_STATUSES = ['all', 'unread', 'favorites', 'snoozed'] as const
export type RoomListStatus = (typeof ROOM_LIST_STATUSES)[number]

const User = Type.Object({ name: Type.String(), email: Type.String(), avatar: Type.String() })

/** A member as room lists and `room:member_added` show it. */
export const ListedMember = Type.Object(
  {
    conversation_id: Id(),
    user: Nullable(User),
    role: StringEnum(ROOM_ROLES),
  },
  { title: 'RoomListedMember' },
)
export type ListedMember = Static<typeof ListedMember>

export const RoomListItem = Type.Object(
  {
    _id: Id(),
    type: StringEnum(ROOM_TYPES),
    name: Nullable(Type.String()),
    owner: Id(),
    members: Type.Array(ListedMember),
    last_message: LastMessage,
    last_activity: Timestamp(),
    unread_count: Type.Integer(),
    is_favorite: Type.Boolean(),
    snoozed_until: Nullable(Type.Integer({ description: 'Unix milliseconds; null when not snoozed' })),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { title: 'RoomListItem' },
)
export type RoomListItem = Static<typeof RoomListItem>

export const ListQuery = Type.Composite([
  PageQuery(20, 100),
  Type.Object({
    search: Type.Optional(Type.String({ maxLength: 200, description: 'In room names and member names' })),
    status: StringEnum(ROOM_LIST_STATUSES, { default: 'all' }),
    type: Type.Optional(StringEnum(ROOM_TYPES)),
  }),
])
export type ListQuery = Static<typeof ListQuery>

export const ListResponse = Type.Object(
  {
    rooms: Type.Array(RoomListItem),
    pagination: PaginationSchema,
  },
  { title: 'RoomList' },
)

export const FavoritesResponse = Type.Object(
  {
    favorites: Type.Array(
      Type.Pick(RoomListItem, ['_id', 'name', 'type', 'last_message', 'unread_count'], {
        title: 'RoomFavorite',
      }),
    ),
  },
  { title: 'RoomFavorites' },
)

/** The example room as its owner's list shows it (see ROOM_EXAMPLE; names and addresses made up). */
export const ROOM_LIST_EXAMPLE = {
  rooms: [
    {
      _id: '65f1c0ffee0000000000c001',
      type: 'group',
      name: 'Launch team',
      owner: '65f1c0ffee0000000000c101',
      members: [
        {
          conversation_id: '65f1c0ffee0000000000c101',
          user: { name: 'Ada Lovelace', email: 'ada@example.com', avatar: 'https://example.com/ada.png' },
          role: 'owner',
        },
        {
          conversation_id: '65f1c0ffee0000000000c102',
          user: { name: 'Grace Hopper', email: 'grace@example.com', avatar: '' },
          role: 'member',
        },
        {
          conversation_id: '65f1c0ffee0000000000c103',
          user: { name: 'Katherine Johnson', email: 'katherine@example.com', avatar: '' },
          role: 'member',
        },
      ],
      last_message: {
        content: 'The landing page is live: please check it on your phone.',
        created_at: '2025-03-14T09:05:12.000Z',
        sender_id: '65f1c0ffee0000000000c101',
      },
      last_activity: '2025-03-14T09:05:12.000Z',
      unread_count: 0,
      is_favorite: true,
      snoozed_until: null,
      created_at: '2025-03-14T09:00:00.000Z',
      updated_at: '2025-03-14T09:05:12.000Z',
    },
  ],
  pagination: { total: 1, page: 1, limit: 20, pages: 1 },
} satisfies Static<typeof ListResponse>
