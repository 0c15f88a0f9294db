import { and, count, eq, gte, ilike, ne, or, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import {
  accounts,
  businesses,
  chatIdentities,
  contacts,
  creditBalances,
  creditLedger,
  instareports,
  instasites,
  memberships,
  persons,
  prospectConversationMembers,
  prospectConversations,
  users,
} from './tables.js'

export type AccountRow = typeof accounts.$inferSelect
export type UserRow = typeof users.$inferSelect
export type ContactRow = typeof contacts.$inferSelect

export async function insertAccount(db: Database, values: typeof accounts.$inferInsert): Promise<AccountRow> {
  const [row] = await db.insert(accounts).values(values).returning()
  return row as AccountRow
}

export async function findAccount(db: Database, accountId: string): Promise<AccountRow | undefined> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId))
  return row
}

export async function updateAccount(
  db: Database,
  accountId: string,
  patch: Partial<typeof accounts.$inferInsert>,
): Promise<AccountRow | undefined> {
  const [row] = await db.update(accounts).set(patch).where(eq(accounts.id, accountId)).returning()
  return row
}

export async function insertUser(
  db: Database,
  values: typeof users.$inferInsert,
): Promise<UserRow | undefined> {
  const [row] = await db.insert(users).values(values).onConflictDoNothing().returning()
  return row
}

export async function findUser(db: Database, userId: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(eq(users.id, userId))
  return row
}

export interface MembershipRow {
  accountId: string
  userId: string
  main: boolean
  conversationId: string
}

/** Adds the membership and the user's chat identity in the account; a repeat only updates `main`. */
export async function upsertMembership(
  db: Database,
  accountId: string,
  userId: string,
  main: boolean,
): Promise<MembershipRow> {
  if (main) await db.update(memberships).set({ main: false }).where(eq(memberships.userId, userId))
  await db
    .insert(memberships)
    .values({ accountId, userId, main })
    .onConflictDoUpdate({ target: [memberships.accountId, memberships.userId], set: { main } })
  await db.insert(chatIdentities).values({ accountId, userId }).onConflictDoNothing()
  const found = await findMembership(db, accountId, userId)
  return found as MembershipRow
}

const membershipColumns = {
  accountId: memberships.accountId,
  userId: memberships.userId,
  main: memberships.main,
  conversationId: chatIdentities.id,
}

const withChatIdentity = and(
  eq(chatIdentities.accountId, memberships.accountId),
  eq(chatIdentities.userId, memberships.userId),
)

export async function findMembership(
  db: Database,
  accountId: string,
  userId: string,
): Promise<MembershipRow | undefined> {
  const [row] = await db
    .select(membershipColumns)
    .from(memberships)
    .innerJoin(chatIdentities, withChatIdentity)
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
  return row
}

export function listMembershipsOfUser(db: Database, userId: string): Promise<MembershipRow[]> {
  return db
    .select(membershipColumns)
    .from(memberships)
    .innerJoin(chatIdentities, withChatIdentity)
    .where(eq(memberships.userId, userId))
    .orderBy(memberships.createdAt)
}

export async function insertContact(
  db: Database,
  accountId: string,
  values: Omit<typeof contacts.$inferInsert, 'accountId'>,
): Promise<ContactRow | undefined> {
  const [row] = await db
    .insert(contacts)
    .values({ ...values, accountId })
    .onConflictDoNothing()
    .returning()
  return row
}

export async function findContact(db: Database, accountId: string, contactId: string) {
  const [row] = await db
    .select()
    .from(contacts)
    .where(and(eq(contacts.accountId, accountId), eq(contacts.id, contactId)))
  return row
}

/** One page of the account's contacts, newest first, optionally matching `search` in name or email. */
export async function listContacts(
  db: Database,
  accountId: string,
  page: { search?: string; offset: number; limit: number },
): Promise<{ rows: ContactRow[]; total: number }> {
  const filters: SQL[] = [eq(contacts.accountId, accountId)]
  if (page.search) {
    const pattern = `%${page.search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`
    filters.push(or(ilike(contacts.name, pattern), ilike(contacts.email, pattern)) as SQL)
  }
  const where = and(...filters)
  const [rows, [totals]] = await Promise.all([
    db
      .select()
      .from(contacts)
      .where(where)
      .orderBy(sql`${contacts.id} desc`)
      .limit(page.limit)
      .offset(page.offset),
    db.select({ total: count() }).from(contacts).where(where),
  ])
  return { rows, total: totals?.total ?? 0 }
}

/** The account-owned records that email variables read, by the name the admin API uses. */
export const variableSources = { persons, businesses, instasites, instareports }
export type VariableSource = keyof typeof variableSources
export type VariableSourceRow<K extends VariableSource> = (typeof variableSources)[K]['$inferSelect']
type VariableSourceInsert<K extends VariableSource> = Omit<
  (typeof variableSources)[K]['$inferInsert'],
  'accountId'
>

export async function insertVariableSource<K extends VariableSource>(
  db: Database,
  accountId: string,
  kind: K,
  values: VariableSourceInsert<K>,
): Promise<VariableSourceRow<K>> {
  const table = variableSources[kind]
  const [row] = await db
    .insert(table)
    .values({ ...values, accountId } as never)
    .returning()
  return row as VariableSourceRow<K>
}

export async function findVariableSource<K extends VariableSource>(
  db: Database,
  accountId: string,
  kind: K,
  id: string,
): Promise<VariableSourceRow<K> | undefined> {
  const table = variableSources[kind]
  const [row] = await db
    .select()
    .from(table as typeof persons)
    .where(and(eq(table.accountId, accountId), eq(table.id, id)))
  return row as VariableSourceRow<K> | undefined
}

/** Records a ledger entry once per (account, event, reference); false when it already exists. */
export async function insertLedgerEntry(
  db: Database,
  accountId: string,
  entry: { event: string; quantity: number; reference: string | null },
): Promise<boolean> {
  const rows = await db
    .insert(creditLedger)
    .values({ accountId, ...entry })
    .onConflictDoNothing()
    .returning({ id: creditLedger.id })
  return rows.length === 1
}

export async function addToBalance(db: Database, accountId: string, quantity: number): Promise<number> {
  const [row] = await db
    .insert(creditBalances)
    .values({ accountId, balance: quantity })
    .onConflictDoUpdate({
      target: creditBalances.accountId,
      set: { balance: sql`${creditBalances.balance} + ${quantity}`, updatedAt: new Date() },
    })
    .returning({ balance: creditBalances.balance })
  return (row as { balance: number }).balance
}

/**
 * Takes `quantity` off the balance only if it covers it. The row lock of the UPDATE serialises
 * concurrent reservations, and the balance is re-checked after the lock, so none overdraws.
 */
export async function takeFromBalance(
  db: Database,
  accountId: string,
  quantity: number,
): Promise<number | null> {
  const [row] = await db
    .update(creditBalances)
    .set({ balance: sql`${creditBalances.balance} - ${quantity}`, updatedAt: new Date() })
    .where(and(eq(creditBalances.accountId, accountId), gte(creditBalances.balance, quantity)))
    .returning({ balance: creditBalances.balance })
  return row ? row.balance : null
}

export async function findBalance(db: Database, accountId: string): Promise<number> {
  const [row] = await db
    .select({ balance: creditBalances.balance })
    .from(creditBalances)
    .where(eq(creditBalances.accountId, accountId))
  return row?.balance ?? 0
}

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
