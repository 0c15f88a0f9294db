import { and, arrayContains, asc, eq, gte, inArray, isNull, sql } from 'drizzle-orm'
import type { AccountStanding } from '../../platform/auth/account-access.js'
import type { Database } from '../../platform/db/connection.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { isMemberOfAccount } from './account-access.service.js'
import {
  accountRemovals,
  accounts,
  chatIdentities,
  creditBalances,
  creditLedger,
  memberships,
  users,
} from './tables.js'

export type AccountRow = typeof accounts.$inferSelect
export type UserRow = typeof users.$inferSelect

export async function insertAccount(db: Database, values: typeof accounts.$inferInsert): Promise<AccountRow> {
  const [row] = await db.insert(accounts).values(values).returning()
  return row as AccountRow
}

export async function findAccount(db: Database, accountId: string): Promise<AccountRow | undefined> {
  const [row] = await db.select().from(accounts).where(eq(accounts.id, accountId))
  return row
}

/** The account's tier (its plan), or undefined when no such account exists. */
export async function findAccountTier(db: Database, accountId: string): Promise<string | undefined> {
  const [row] = await db.select({ tier: accounts.tier }).from(accounts).where(eq(accounts.id, accountId))
  return row?.tier
}

/** The id and name of each of the accounts that exist among `accountIds`, in one statement. */
export function findAccountNames(
  db: Database,
  accountIds: string[],
): Promise<{ id: string; name: string }[]> {
  return db
    .select({ id: accounts.id, name: accounts.name })
    .from(accounts)
    .where(inArray(accounts.id, accountIds))
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

/** A user removed (user-admin.*) is none: its row stays only so that its tokens are refused. */
export const isUserHeld = (userId: string) => and(eq(users.id, userId), isNull(users.removedAt))

export async function findUser(db: Database, userId: string): Promise<UserRow | undefined> {
  const [row] = await db.select().from(users).where(isUserHeld(userId))
  return row
}

export async function setUserPermissions(
  db: Database,
  userId: string,
  permissions: string[],
): Promise<UserRow | undefined> {
  const [row] = await db
    .update(users)
    .set({ permissions, updatedAt: new Date() })
    .where(isUserHeld(userId))
    .returning()
  return row
}

export async function userHoldsPermission(
  db: Database,
  userId: string,
  permission: string,
): Promise<boolean> {
  const rows = await db
    .select({ id: users.id })
    .from(users)
    .where(and(eq(users.id, userId), arrayContains(users.permissions, [permission])))
  return rows.length === 1
}

/** Whether `accountId` is a sub-account of `parentAccountId` (its `parent_account`). */
export async function isChildAccount(
  db: Database,
  parentAccountId: string,
  accountId: string,
): Promise<boolean> {
  const rows = await db
    .select({ id: accounts.id })
    .from(accounts)
    .where(and(eq(accounts.id, accountId), eq(accounts.parentAccount, parentAccountId)))
  return rows.length === 1
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

/** Removes the membership; the chat identity stays, as the rooms' history names it. False: no membership. */
export async function deleteMembership(db: Database, accountId: string, userId: string): Promise<boolean> {
  const rows = await db
    .delete(memberships)
    .where(and(eq(memberships.accountId, accountId), eq(memberships.userId, userId)))
    .returning({ userId: memberships.userId })
  return rows.length === 1
}

// By primary keys only: asked on every authenticated call this instance has no verdict for. An account whose
// rows a removal has deleted is still `removed` (its removal's record, by the GIN index of its ids); the
// removal is looked up only when the account is not found (coalesce evaluates no further than it needs).
const accountStandingStatement = preparedStatement<AccountStanding>(
  'account_standing',
  sql`select
      coalesce(
        (select status from ${accounts} where id = ${sql.placeholder('accountId')}),
        (select 'removed' from ${accountRemovals}
          where ${accountRemovals.accountIds} @> array[${sql.placeholder('accountId')}]::text[] limit 1)
      ) as status,
      (not exists (select 1 from ${users} where id = ${sql.placeholder('userId')})
        or ${isMemberOfAccount(sql`${sql.placeholder('accountId')}`, sql`${sql.placeholder('userId')}`)}
      ) as member,
      (select request_budget::integer from ${accounts} where id = ${sql.placeholder('accountId')})
        as "requestBudget",
      (select floor(extract(epoch from ${users.sessionsValidAfter}))::float8 from ${users}
        where id = ${sql.placeholder('userId')}) as "sessionsValidAfter"`,
)

/**
 * The account's status, whether the user is a member of it (a user this service does not hold is), the
 * account's own request budget, and the second after which the user's sessions start (a password reset's).
 */
export async function findAccountStanding(
  db: Database,
  accountId: string,
  userId: string,
): Promise<AccountStanding> {
  const [row] = await accountStandingStatement(db, { accountId, userId })
  return row as AccountStanding
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

/** The account's ledger entries naming `reference`, oldest first. */
export function findLedgerEntries(
  db: Database,
  accountId: string,
  reference: string,
): Promise<{ event: string; quantity: number }[]> {
  return db
    .select({ event: creditLedger.event, quantity: creditLedger.quantity })
    .from(creditLedger)
    .where(and(eq(creditLedger.accountId, accountId), eq(creditLedger.reference, reference)))
    .orderBy(asc(creditLedger.createdAt), asc(creditLedger.id))
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
