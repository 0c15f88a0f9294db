import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { NotFound } from '../../platform/http/errors.js'
import { findMembership } from './accounts.repository.js'
import { getContact } from './contacts.service.js'
import {
  addUnreadForUser,
  findOpenProspectConversationRow,
  findProspectConversation,
  insertProspectConversation,
  listProspectMembers,
  type ProspectConversationRow,
  touchProspectConversation,
} from './prospect-conversations.repository.js'
import type { ProspectConversation } from './prospect-conversations.schemas.js'

async function view(db: Database, row: ProspectConversationRow): Promise<ProspectConversation> {
  const members = await listProspectMembers(db, row.accountId, row.id)
  return {
    _id: row.id,
    account_id: row.accountId,
    contact_id: row.contactId,
    channel: row.channel,
    title: row.title,
    is_open: row.isOpen,
    last_activity: row.lastActivity.toISOString(),
    members: members.map((m) => ({ user_id: m.userId, unread_count: m.unreadCount })),
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export async function getProspectConversation(
  db: Database,
  accountId: string,
  conversationId: string,
): Promise<ProspectConversation> {
  const row = await findProspectConversation(db, accountId, conversationId)
  if (!row) throw new NotFound('Conversation not found')
  return view(db, row)
}

export async function findOpenProspectConversation(
  db: Database,
  accountId: string,
  contactId: string,
  channel: string,
): Promise<ProspectConversation | null> {
  const row = await findOpenProspectConversationRow(db, accountId, contactId, channel)
  return row ? view(db, row) : null
}

/**
 * Opens a conversation with a contact of the account, followed by the given users (members of the
 * account). `created` is false when an open one on the channel already existed and is returned.
 */
export function openProspectConversation(
  db: Database,
  accountId: string,
  input: { contact_id: string; channel: string; title?: string; member_user_ids: string[] },
): Promise<{ conversation: ProspectConversation; created: boolean }> {
  return inTransaction(db, async (tx) => {
    await getContact(tx, accountId, input.contact_id)
    const existing = await findOpenProspectConversation(tx, accountId, input.contact_id, input.channel)
    if (existing) return { conversation: existing, created: false }
    for (const userId of input.member_user_ids) {
      if (!(await findMembership(tx, accountId, userId)))
        throw new NotFound('User is not a member of this account')
    }
    const row = await insertProspectConversation(
      tx,
      accountId,
      { contactId: input.contact_id, channel: input.channel, title: input.title ?? '' },
      input.member_user_ids,
    )
    return { conversation: await view(tx, row), created: true }
  })
}

/** New activity in the conversation: reopens it and counts one unread message for each member but the author. */
export async function recordProspectActivity(
  db: Database,
  accountId: string,
  conversationId: string,
  authorUserId: string | null = null,
): Promise<ProspectConversation> {
  return inTransaction(db, async (tx) => {
    if (!(await findProspectConversation(tx, accountId, conversationId)))
      throw new NotFound('Conversation not found')
    await touchProspectConversation(tx, accountId, conversationId, authorUserId)
    return getProspectConversation(tx, accountId, conversationId)
  })
}

/**
 * Email sent by a user of the account in this conversation (the spec's send rule 10): the user
 * follows the conversation and their unread count grows by one; the activity time moves on.
 */
export async function recordEmailFromUser(
  db: Database,
  accountId: string,
  conversationId: string,
  userId: string,
): Promise<ProspectConversation> {
  return inTransaction(db, async (tx) => {
    if (!(await findProspectConversation(tx, accountId, conversationId)))
      throw new NotFound('Conversation not found')
    if (!(await findMembership(tx, accountId, userId)))
      throw new NotFound('User is not a member of this account')
    await addUnreadForUser(tx, accountId, conversationId, userId)
    return getProspectConversation(tx, accountId, conversationId)
  })
}
