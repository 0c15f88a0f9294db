import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { requireChangeableAccount } from '../accounts/accounts.service.js'
import {
  closeConversation,
  findDefaultInbox,
  findMessagesOfCommunications,
  findOpenConversation,
  findRoomOfConversation,
  insertInbox,
  insertOrFindMessage,
  insertOrFindOpenConversation,
  insertOrFindRoom,
  listConversations,
  listRoomMessages,
  type SupportConversationRow,
  type SupportInboxRow,
  type SupportMessageRow,
  type SupportRoomRow,
} from './support.repository.js'
import type {
  CreateInboxBody,
  SupportConversation,
  SupportInbox,
  SupportMessage,
  SupportRoom,
  SupportThread,
} from './support.schemas.js'
import type { SUPPORT_MESSAGE_DIRECTIONS, SupportAttachment } from './tables.js'

/** The inbox type replies to sent emails arrive through. */
export const EMAIL_INBOX_TYPE = 'email_inbound'

const inboxView = (row: SupportInboxRow): SupportInbox => ({
  _id: row.id,
  account_id: row.accountId,
  type: row.type,
  name: row.name,
  is_default: row.isDefault,
  created_at: row.createdAt.toISOString(),
  updated_at: row.updatedAt.toISOString(),
})

const conversationView = (row: SupportConversationRow): SupportConversation => ({
  _id: row.id,
  account_id: row.accountId,
  contact_id: row.contactId,
  subject: row.subject,
  is_open: row.isOpen,
  created_at: row.createdAt.toISOString(),
})

const roomView = (row: SupportRoomRow): SupportRoom => ({
  _id: row.id,
  account_id: row.accountId,
  conversation_id: row.conversationId,
  inbox_id: row.inboxId,
  participants: row.participants,
  created_at: row.createdAt.toISOString(),
})

const messageView = (row: SupportMessageRow): SupportMessage => ({
  _id: row.id,
  account_id: row.accountId,
  room_id: row.roomId,
  conversation_id: row.conversationId,
  direction: row.direction,
  content: row.content,
  communication_id: row.communicationId,
  msg_id: row.msgId,
  attachments: row.attachments,
  created_at: row.createdAt.toISOString(),
})

/** Creates an inbox; a default one replaces the account's previous default of the same type. */
export async function createInbox(
  db: Database,
  accountId: string,
  input: CreateInboxBody,
): Promise<SupportInbox> {
  await requireChangeableAccount(db, accountId)
  const row = await inTransaction(db, (tx) =>
    insertInbox(tx, accountId, { type: input.type, name: input.name, isDefault: input.is_default ?? false }),
  )
  return inboxView(row)
}

/** The contact's open conversation in the account, created with `subject` when there is none. */
export async function openConversationFor(
  db: Database,
  accountId: string,
  contactId: string,
  subject: string,
): Promise<SupportConversation> {
  const existing = await findOpenConversation(db, accountId, contactId)
  if (existing) return conversationView(existing)
  // A concurrent reply may have opened it between the two queries; then it is read back.
  const { row } = await insertOrFindOpenConversation(db, accountId, { contactId, subject })
  return conversationView(row)
}

export async function closeSupportConversation(
  db: Database,
  accountId: string,
  conversationId: string,
): Promise<void> {
  await closeConversation(db, accountId, conversationId)
}

/**
 * The conversation's room; a new one has the participants and is linked to the account's default
 * inbox of `inboxType` when there is one.
 */
export async function roomForConversation(
  db: Database,
  accountId: string,
  input: { conversationId: string; participants: string[]; inboxType: string },
): Promise<SupportRoom> {
  const existing = await findRoomOfConversation(db, accountId, input.conversationId)
  if (existing) return roomView(existing)
  const inbox = await findDefaultInbox(db, accountId, input.inboxType)
  const { row } = await insertOrFindRoom(db, accountId, {
    conversationId: input.conversationId,
    inboxId: inbox?.id ?? null,
    participants: input.participants,
  })
  return roomView(row)
}

export interface NewSupportMessage {
  roomId: string
  conversationId: string
  direction: (typeof SUPPORT_MESSAGE_DIRECTIONS)[number]
  content: string
  communicationId: string
  msgId: string | null
  attachments?: SupportAttachment[]
  createdAt?: Date
}

/**
 * Adds the message made from a communication; when that communication already has one, that one is
 * returned with `created: false`, so an email is never shown twice.
 */
export async function addSupportMessage(
  db: Database,
  accountId: string,
  input: NewSupportMessage,
): Promise<{ message: SupportMessage; created: boolean }> {
  const { row, created } = await insertOrFindMessage(db, accountId, {
    roomId: input.roomId,
    conversationId: input.conversationId,
    direction: input.direction,
    content: input.content,
    communicationId: input.communicationId,
    msgId: input.msgId,
    attachments: input.attachments ?? [],
    ...(input.createdAt && { createdAt: input.createdAt }),
  })
  return { message: messageView(row), created }
}

/** The support messages made from the given communications of the account. */
export async function findSupportMessagesOfCommunications(
  db: Database,
  accountId: string,
  communicationIds: string[],
): Promise<SupportMessage[]> {
  return (await findMessagesOfCommunications(db, accountId, communicationIds)).map(messageView)
}

export async function findSupportMessageOfCommunication(
  db: Database,
  accountId: string,
  communicationId: string,
): Promise<SupportMessage | null> {
  const [found] = await findSupportMessagesOfCommunications(db, accountId, [communicationId])
  return found ?? null
}

/** The account's support conversations (the contact's only, when given), oldest first, with their rooms. */
export async function listSupportThreads(
  db: Database,
  accountId: string,
  filter: { contactId?: string } = {},
): Promise<SupportThread[]> {
  const rows = await listConversations(db, accountId, filter.contactId)
  return rows.map(({ conversation, room }) => ({
    ...conversationView(conversation),
    room: room && roomView(room),
  }))
}

/** The room's messages, oldest first. */
export async function listSupportRoomMessages(
  db: Database,
  accountId: string,
  roomId: string,
): Promise<SupportMessage[]> {
  return (await listRoomMessages(db, accountId, roomId)).map(messageView)
}
