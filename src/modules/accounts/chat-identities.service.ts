import type { Database } from '../../platform/db/connection.js'
import { findChatIdentitiesIn, findChatIdentityIdsByName } from './chat-identities.repository.js'

/** A chat identity (a user's `conversation.id` in an account) as rooms show their members. */
export interface ChatIdentity {
  conversation_id: string
  user: { name: string; email: string; avatar: string }
}

/**
 * The chat identities of the account among `ids`, keyed by id (one query for any number): an id of
 * another account, unknown or malformed, is simply absent.
 */
export async function findChatIdentities(
  db: Database,
  accountId: string,
  ids: readonly string[],
): Promise<Map<string, ChatIdentity>> {
  const rows = await findChatIdentitiesIn(db, accountId, [...new Set(ids)])
  return new Map(
    rows.map((row) => [
      row.conversationId,
      { conversation_id: row.conversationId, user: { name: row.name, email: row.email, avatar: row.image } },
    ]),
  )
}

/** The account's chat identities whose user's name contains `search`, in any case (room search by member). */
export function findChatIdentitiesNamed(db: Database, accountId: string, search: string): Promise<string[]> {
  return findChatIdentityIdsByName(db, accountId, search)
}
