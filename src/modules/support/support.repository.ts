import { and, asc, eq, inArray } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
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

export async function findOpenConversation(
  db: Database,
  accountId: string,
  contactId: string,
): Promise<SupportConversationRow | undefined> {
  const [row] = await db
    .select()
    .from(supportConversations)
    .where(
      and(
        eq(supportConversations.accountId, accountId),
        eq(supportConversations.contactId, contactId),
        eq(supportConversations.isOpen, true),
      ),
    )
  return row
}

/** Undefined when the contact already has an open conversation (a concurrent insert won). */
export async function insertOpenConversation(
  db: Database,
  accountId: string,
  values: { contactId: string; subject: string },
): Promise<SupportConversationRow | undefined> {
  const [row] = await db
    .insert(supportConversations)
    .values({ ...values, accountId, isOpen: true })
    .onConflictDoNothing()
    .returning()
  return row
}

export async function closeConversation(db: Database, accountId: string, conversationId: string) {
  await db
    .update(supportConversations)
    .set({ isOpen: false })
    .where(and(eq(supportConversations.accountId, accountId), eq(supportConversations.id, conversationId)))
}

export async function findRoomOfConversation(
  db: Database,
  accountId: string,
  conversationId: string,
): Promise<SupportRoomRow | undefined> {
  const [row] = await db
    .select()
    .from(supportRooms)
    .where(and(eq(supportRooms.accountId, accountId), eq(supportRooms.conversationId, conversationId)))
  return row
}

/** Undefined when the conversation already has its room (a concurrent insert won). */
export async function insertRoom(
  db: Database,
  accountId: string,
  values: { conversationId: string; inboxId: string | null; participants: string[] },
): Promise<SupportRoomRow | undefined> {
  const [row] = await db
    .insert(supportRooms)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning()
  return row
}

/** Undefined when the communication already has its support message. */
export async function insertMessage(
  db: Database,
  accountId: string,
  values: Omit<typeof supportMessages.$inferInsert, 'accountId' | 'id'>,
): Promise<SupportMessageRow | undefined> {
  const [row] = await db
    .insert(supportMessages)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning()
  return row
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
