import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  check,
  customType,
  foreignKey,
  index,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core'
import {
  accountIdColumn,
  accountKey,
  createdAt,
  idFormat,
  ownedIdColumn,
  timestampColumn,
  updatedAt,
} from '../../platform/db/columns.js'

export const ROOM_TYPES = ['direct', 'group'] as const
export type RoomType = (typeof ROOM_TYPES)[number]
export const ROOM_ROLES = ['owner', 'admin', 'member'] as const
export type RoomRole = (typeof ROOM_ROLES)[number]
export const MESSAGE_KINDS = ['user', 'system'] as const
export type MessageKind = (typeof MESSAGE_KINDS)[number]

/** A per-room message sequence number (Mattermost's model: unread = room sequence − read sequence). */
const sequence = (name: string) => bigint(name, { mode: 'number' }).notNull().default(0)

const tsvector = customType<{ data: string }>({ dataType: () => 'tsvector' })

/**
 * The spec's Room. Members are chat identities (`conversation.id` of tokens, accounts' chat_identities).
 * `direct_pair` is the two identities of a direct room, ordered and joined by ':', unique per account,
 * so that concurrent creations of the same direct room find one row.
 */
export const rooms = pgTable(
  'rooms',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    type: text('type', { enum: ROOM_TYPES }).notNull(),
    /** Group rooms only; null for direct rooms. */
    name: text('name'),
    ownerId: text('owner_id').notNull(),
    directPair: text('direct_pair'),
    /** The sequence of the room's latest message (0: none yet). */
    lastSeq: sequence('last_seq'),
    /** The latest message not deleted, for `last_message`. */
    lastMessageId: text('last_message_id'),
    lastActivity: timestampColumn('last_activity').notNull().defaultNow(),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (t) => [
    accountKey('rooms', t),
    idFormat('rooms_id_format', t.id),
    check('rooms_type_valid', sql`${t.type} in ('direct', 'group')`),
    check('rooms_direct_pair_for_direct_rooms', sql`(${t.type} = 'direct') = (${t.directPair} is not null)`),
    uniqueIndex('rooms_account_direct_pair').on(t.accountId, t.directPair),
    index('rooms_account_activity').on(t.accountId, t.lastActivity),
  ],
)

/** Current members of a room, with each member's own state: role, favorite, snooze, read marker. */
export const roomMembers = pgTable(
  'room_members',
  {
    accountId: accountIdColumn(),
    roomId: text('room_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    role: text('role', { enum: ROOM_ROLES }).notNull().default('member'),
    joinedAt: timestampColumn('joined_at').notNull().defaultNow(),
    isFavorite: boolean('is_favorite').notNull().default(false),
    snoozedUntil: timestampColumn('snoozed_until'),
    /** The sequence of the last message this member has read (`last_message_read`). */
    readSeq: sequence('read_seq'),
    readMessageId: text('read_message_id'),
    readAt: timestampColumn('read_at'),
    /**
     * The room's `last_activity`, kept with each of its memberships so that a member's rooms are read most
     * recent activity first along an index, however many rooms the member is in.
     */
    lastActivity: timestampColumn('last_activity').notNull().defaultNow(),
  },
  (t) => [
    // Led by the account, so that a room's members are read along the account's own entries.
    primaryKey({ columns: [t.accountId, t.roomId, t.conversationId] }),
    foreignKey({
      name: 'room_members_room_fk',
      columns: [t.accountId, t.roomId],
      foreignColumns: [rooms.accountId, rooms.id],
    }).onDelete('cascade'),
    check('room_members_role_valid', sql`${t.role} in ('owner', 'admin', 'member')`),
    index('room_members_account_identity_activity').on(
      t.accountId,
      t.conversationId,
      t.lastActivity,
      t.roomId,
    ),
  ],
)

/** The spec's `all_members`: every stay of an identity in a room; a rejoin opens a new entry. */
export const roomMemberHistory = pgTable(
  'room_member_history',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    roomId: text('room_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    joinedAt: timestampColumn('joined_at').notNull().defaultNow(),
    leftAt: timestampColumn('left_at'),
  },
  (t) => [
    accountKey('room_member_history', t),
    idFormat('room_member_history_id_format', t.id),
    foreignKey({
      name: 'room_member_history_room_fk',
      columns: [t.accountId, t.roomId],
      foreignColumns: [rooms.accountId, rooms.id],
    }).onDelete('cascade'),
    index('room_member_history_account_room').on(t.accountId, t.roomId, t.joinedAt),
    // At most one open stay per identity and room.
    uniqueIndex('room_member_history_account_open_stay')
      .on(t.accountId, t.roomId, t.conversationId)
      .where(sql`${t.leftAt} is null`),
  ],
)

/**
 * A message of a room: written by a member (`user`) or by the service about a change (`system`, its
 * `sender_id` the member who made the change). Deleted messages keep their row and sequence.
 */
export const roomMessages = pgTable(
  'room_messages',
  {
    id: ownedIdColumn(),
    accountId: accountIdColumn(),
    roomId: text('room_id').notNull(),
    seq: bigint('seq', { mode: 'number' }).notNull(),
    kind: text('kind', { enum: MESSAGE_KINDS }).notNull().default('user'),
    senderId: text('sender_id').notNull(),
    content: text('content').notNull(),
    /**
     * What full-text search looks in: the content's words, language-neutral ('simple'), each behind the
     * account's search prefix (`room_search_vector`, migration 0032), so that the words are the account's own.
     */
    searchVector: tsvector('search_vector').generatedAlwaysAs(sql`room_search_vector(account_id, content)`),
    createdAt: createdAt(),
    editedAt: timestampColumn('edited_at'),
    deletedAt: timestampColumn('deleted_at'),
  },
  (t) => [
    accountKey('room_messages', t),
    idFormat('room_messages_id_format', t.id),
    check('room_messages_kind_valid', sql`${t.kind} in ('user', 'system')`),
    foreignKey({
      name: 'room_messages_room_fk',
      columns: [t.accountId, t.roomId],
      foreignColumns: [rooms.accountId, rooms.id],
    }).onDelete('cascade'),
    uniqueIndex('room_messages_account_room_seq').on(t.accountId, t.roomId, t.seq),
    // Unread counts subtract the member's own and the deleted messages past the read marker.
    index('room_messages_room_sender_seq').on(t.roomId, t.senderId, t.seq),
    index('room_messages_room_deleted_seq').on(t.roomId, t.seq).where(sql`${t.deletedAt} is not null`),
    // Search reads one account's matches: GIN over words that are the account's own, so that neither a
    // word common in other accounts nor the account's every message is read (docs/decisions.md, "Search
    // keyed by the account").
    index('room_messages_account_keyed_search').using('gin', t.searchVector),
    // A search for a common word ranks only the newest hits: it walks the account's messages newest first,
    // stopping once it has them, instead of reading every hit (docs/decisions.md, "Searches whose cost does
    // not grow with the account").
    index('room_messages_account_newest').on(t.accountId, t.createdAt, t.id),
  ],
)
