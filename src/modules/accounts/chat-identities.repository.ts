import { and, eq, ilike, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedOnce } from '../../platform/db/prepared.js'
import { containsPattern } from '../../platform/db/search.js'
import { chatIdentities, users } from './tables.js'

export interface ChatIdentityRow {
  conversationId: string
  name: string
  email: string
  image: string
}

/** A removed user's address is their id (user-admin.repository.ts), an id and no address: shown as none. */
const shownEmail = sql<string>`case when ${users.removedAt} is null then ${users.email} else '' end`

const identitiesIn = preparedOnce((db) =>
  db
    .select({ conversationId: chatIdentities.id, name: users.name, email: shownEmail, image: users.image })
    .from(chatIdentities)
    .innerJoin(users, eq(users.id, chatIdentities.userId))
    .where(
      and(
        eq(chatIdentities.accountId, sql.placeholder('accountId')),
        sql`${chatIdentities.id} = any(${sql.placeholder('ids')}::text[])`,
      ),
    )
    .prepare('chat_identities_in'),
)

/**
 * The account's chat identities among `ids`, with their users; ids of other accounts are not found. One
 * prepared statement whatever the number of ids (room lists ask for a page's members on every call).
 */
export function findChatIdentitiesIn(
  db: Database,
  accountId: string,
  ids: string[],
): Promise<ChatIdentityRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return identitiesIn(db).execute({ accountId, ids })
}

/** The ids of the account's chat identities whose user's name contains `search` (case-insensitive). */
export async function findChatIdentityIdsByName(
  db: Database,
  accountId: string,
  search: string,
): Promise<string[]> {
  const rows = await db
    .select({ id: chatIdentities.id })
    .from(chatIdentities)
    .innerJoin(users, eq(users.id, chatIdentities.userId))
    .where(and(eq(chatIdentities.accountId, accountId), ilike(users.name, containsPattern(search))))
  return rows.map((row) => row.id)
}
