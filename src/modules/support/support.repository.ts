import { and, asc, eq, inArray } from 'drizzle-orm'
import type { AnyPgColumn } from 'drizzle-orm/pg-core'
import type { Database } from '../../platform/db/connection.js'
import { insertOrFind } from '../../platform/db/insert-or-find.js'
import { supportConversations, supportInboxes, supportMessages, supportRooms } from './tables.js'

export type SupportInboxRow = typeof supportInboxes.$inferSelect
export type SupportConversationRow = typeof supportConversations.$inferSelect
export type SupportRoomRow = typeof supportRooms.$inferSelect
export type SupportMessageRow = typeof supportMessages.$inferSelect

/** Inserts the inbox; a new default first takes the flag from the account's other inbox of its type. */
export async function insertInbox(
  db: Database,
  accountId: string,
  values: { type: string; name: string; isDefault: boolean },
): Promise<SupportInboxRow> {
  if (values.isDefault) {
    await db
      .update(supportInboxes)
      .set({ isDefault: false })
      .where(
        and(
          eq(supportInboxes.accountId, accountId),
          eq(supportInboxes.type, values.type),
          eq(supportInboxes.isDefault, true),
        ),
      )
  }
  const [row] = await db
    .insert(supportInboxes)
    .values({ ...values, accountId })
    .returning()
  if (!row) throw new Error('support inbox insert returned no row')
  return row
}

export async function findDefaultInbox(
  db: Database,
  accountId: string,
  type: string,
): Promise<SupportInboxRow | undefined> {
  const [row] = await db
    .select()
    .from(supportInboxes)
    .where(
      and(
        eq(supportInboxes.accountId, accountId),
        eq(supportInboxes.type, type),
        eq(supportInboxes.isDefault, true),
      ),
    )
  return row
}

const openConversationOf = (accountId: string, contactId: string) =>
  and(
    eq(supportConversations.accountId, accountId),
    eq(supportConversations.contactId, contactId),
    eq(supportConversations.isOpen, true),
  )

const roomOf = (accountId: string, conversationId: string | AnyPgColumn) =>
  and(eq(supportRooms.accountId, accountId), eq(supportRooms.conversationId, conversationId))

export async function findOpenConversation(
  db: Database,
  accountId: string,
  contactId: string,
): Promise<SupportConversationRow | undefined> {
  const [row] = await db.select().from(supportConversations).where(openConversationOf(accountId, contactId))
  return row
}

/** Opens a conversation with the contact, or finds the open one a concurrent insert made. */
export function insertOrFindOpenConversation(
  db: Database,
  accountId: string,
  values: { contactId: string; subject: string },
): Promise<{ row: SupportConversationRow; created: boolean }> {
  return insertOrFind(
    db,
    supportConversations,
    { ...values, accountId, isOpen: true },
    openConversationOf(accountId, values.contactId),
  )
}

export async function closeConversation(db: Database, accountId: string, conversationId: string) {
  await db
    .update(supportConversations)
    .set({ isOpen: false })
    .where(and(eq(supportConversations.accountId, accountId), eq(supportConversations.id, conversationId)))
}

/** The account's conversations (the contact's only, when given), oldest first, each with its room. */
export function listConversations(db: Database, accountId: string, contactId: string | undefined) {
  return db
    .select({ conversation: supportConversations, room: supportRooms })
    .from(supportConversations)
    .leftJoin(supportRooms, roomOf(accountId, supportConversations.id))
    .where(
      and(
        eq(supportConversations.accountId, accountId),
        contactId === undefined ? undefined : eq(supportConversations.contactId, contactId),
      ),
    )
    .orderBy(asc(supportConversations.createdAt), asc(supportConversations.id))
}

export async function findRoomOfConversation(
  db: Database,
  accountId: string,
  conversationId: string,
): Promise<SupportRoomRow | undefined> {
  const [row] = await db.select().from(supportRooms).where(roomOf(accountId, conversationId))
  return row
}

/** Makes the conversation's room, or finds the one a concurrent insert made. */
export function insertOrFindRoom(
  db: Database,
  accountId: string,
  values: { conversationId: string; inboxId: string | null; participants: string[] },
): Promise<{ row: SupportRoomRow; created: boolean }> {
  return insertOrFind(db, supportRooms, { ...values, accountId }, roomOf(accountId, values.conversationId))
}

/** Records the communication's support message, or finds the one recorded before (a redelivery). */
export function insertOrFindMessage(
  db: Database,
  accountId: string,
  values: Omit<typeof supportMessages.$inferInsert, 'accountId' | 'id'> & { communicationId: string },
): Promise<{ row: SupportMessageRow; created: boolean }> {
  return insertOrFind(
    db,
    supportMessages,
    { ...values, accountId },
    and(
      eq(supportMessages.accountId, accountId),
      eq(supportMessages.communicationId, values.communicationId),
    ),
  )
}

export function findMessagesOfCommunications(
  db: Database,
  accountId: string,
  communicationIds: string[],
): Promise<SupportMessageRow[]> {
  if (communicationIds.length === 0) return Promise.resolve([])
  return db
    .select()
    .from(supportMessages)
    .where(
      and(
        eq(supportMessages.accountId, accountId),
        inArray(supportMessages.communicationId, communicationIds),
      ),
    )
}

export function listRoomMessages(
  db: Database,
  accountId: string,
  roomId: string,
): Promise<SupportMessageRow[]> {
  return db
    .select()
    .from(supportMessages)
    .where(and(eq(supportMessages.accountId, accountId), eq(supportMessages.roomId, roomId)))
    .orderBy(asc(supportMessages.createdAt), asc(supportMessages.id))
}
