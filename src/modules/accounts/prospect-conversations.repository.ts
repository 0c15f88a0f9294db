import { and, eq, ne, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { prospectConversationMembers, prospectConversations } from './tables.js'

export type ProspectConversationRow = typeof prospectConversations.$inferSelect
export type ProspectMemberRow = typeof prospectConversationMembers.$inferSelect

export async function insertProspectConversation(
  db: Database,
  accountId: string,
  values: { contactId: string; channel: string; title: string },
  memberUserIds: string[],
): Promise<ProspectConversationRow> {
  const [row] = await db
    .insert(prospectConversations)
    .values({ ...values, accountId })
    .returning()
  const conversation = row as ProspectConversationRow
  if (memberUserIds.length > 0) {
    await db
      .insert(prospectConversationMembers)
      .values(memberUserIds.map((userId) => ({ accountId, conversationId: conversation.id, userId })))
      .onConflictDoNothing()
  }
  return conversation
}

export async function findProspectConversation(db: Database, accountId: string, conversationId: string) {
  const [row] = await db
    .select()
    .from(prospectConversations)
    .where(and(eq(prospectConversations.accountId, accountId), eq(prospectConversations.id, conversationId)))
  return row
}

/** The newest open conversation with the contact on the channel. */
export async function findOpenProspectConversationRow(
  db: Database,
  accountId: string,
  contactId: string,
  channel: string,
): Promise<ProspectConversationRow | undefined> {
  const [row] = await db
    .select()
    .from(prospectConversations)
    .where(
      and(
        eq(prospectConversations.accountId, accountId),
        eq(prospectConversations.contactId, contactId),
        eq(prospectConversations.channel, channel),
        eq(prospectConversations.isOpen, true),
      ),
    )
    .orderBy(sql`${prospectConversations.lastActivity} desc`)
    .limit(1)
  return row
}

export function listProspectMembers(
  db: Database,
  accountId: string,
  conversationId: string,
): Promise<ProspectMemberRow[]> {
  return db
    .select()
    .from(prospectConversationMembers)
    .where(
      and(
        eq(prospectConversationMembers.accountId, accountId),
        eq(prospectConversationMembers.conversationId, conversationId),
      ),
    )
    .orderBy(prospectConversationMembers.userId)
}

/** Marks new activity: the time moves on and every member but the author has one more unread message. */
export async function touchProspectConversation(
  db: Database,
  accountId: string,
  conversationId: string,
  authorUserId: string | null,
): Promise<void> {
  await db
    .update(prospectConversations)
    .set({ lastActivity: new Date(), isOpen: true })
    .where(and(eq(prospectConversations.accountId, accountId), eq(prospectConversations.id, conversationId)))
  const members = and(
    eq(prospectConversationMembers.accountId, accountId),
    eq(prospectConversationMembers.conversationId, conversationId),
  )
  await db
    .update(prospectConversationMembers)
    .set({ unreadCount: sql`${prospectConversationMembers.unreadCount} + 1` })
    .where(authorUserId ? and(members, ne(prospectConversationMembers.userId, authorUserId)) : members)
}

/** Makes the user follow the conversation (if not yet) with one more unread message, and moves its activity on. */
export async function addUnreadForUser(
  db: Database,
  accountId: string,
  conversationId: string,
  userId: string,
): Promise<void> {
  await db
    .update(prospectConversations)
    .set({ lastActivity: new Date(), isOpen: true })
    .where(and(eq(prospectConversations.accountId, accountId), eq(prospectConversations.id, conversationId)))
  await db
    .insert(prospectConversationMembers)
    .values({ accountId, conversationId, userId, unreadCount: 1 })
    .onConflictDoUpdate({
      target: [
        prospectConversationMembers.accountId,
        prospectConversationMembers.conversationId,
        prospectConversationMembers.userId,
      ],
      set: { unreadCount: sql`${prospectConversationMembers.unreadCount} + 1` },
    })
}
