import { hash } from '@node-rs/argon2'
import type { AccountAccess, AccountStanding } from '../../platform/auth/account-access.js'
import type { PlatformTokens } from '../../platform/auth/platform-jwt.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Changes } from '../../platform/events/changes.js'
import { Conflict, NotFound } from '../../platform/http/errors.js'
import { findRemovalOf } from './account-removal.repository.js'
import {
  type AccountRow,
  deleteMembership,
  findAccount,
  findAccountNames,
  findAccountStanding,
  findMembership,
  findUser,
  insertAccount,
  insertUser,
  isChildAccount,
  listMembershipsOfUser,
  type MembershipRow,
  setUserPermissions as setUserPermissionsRow,
  type UserRow,
  updateAccount as updateAccountRow,
  upsertMembership,
  userHoldsPermission,
} from './accounts.repository.js'
import type {
  Account,
  AccountStatus,
  AccountTier,
  Membership,
  User,
  UserPermission,
} from './accounts.schemas.js'
import { lockUser } from './user-admin.repository.js'

export function accountView(row: AccountRow): Account {
  return {
    _id: row.id,
    name: row.name,
    parent_account: row.parentAccount,
    status: row.status,
    tier: row.tier,
    listings: { entity: row.listingsEntity },
    listings_status: row.listingsStatus,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export interface AccountInput {
  name: string
  parent_account?: string
  status?: AccountStatus
  tier?: AccountTier
  listings_entity?: string
}

export async function createAccount(db: Database, input: AccountInput): Promise<Account> {
  if (input.parent_account) {
    const parent = await findAccount(db, input.parent_account)
    if (parent?.status === 'removed' || (!parent && (await findRemovalOf(db, input.parent_account))))
      throw new Conflict(ACCOUNT_REMOVED_MESSAGE)
    if (!parent) throw new NotFound('Parent account not found')
  }
  const entity = input.listings_entity ?? ''
  const row = await insertAccount(db, {
    name: input.name,
    parentAccount: input.parent_account ?? null,
    status: input.status,
    tier: input.tier,
    listingsEntity: entity,
    listingsStatus: entity !== '',
  })
  return accountView(row)
}

/** The full account, or null when there is none (the listings `getAccount` operation). */
export async function getAccount(db: Database, accountId: string): Promise<Account | null> {
  const row = await findAccount(db, accountId)
  return row ? accountView(row) : null
}

/** The accounts' names by id, read at once for a page of many accounts' rows (an account since removed has none). */
export async function accountNames(
  db: Database,
  accountIds: (string | undefined)[],
): Promise<Map<string, string>> {
  const ids = [...new Set(accountIds.filter((id) => id !== undefined))]
  if (ids.length === 0) return new Map()
  return new Map((await findAccountNames(db, ids)).map((account) => [account.id, account.name]))
}

export async function requireAccount(db: Database, accountId: string): Promise<Account> {
  const account = await getAccount(db, accountId)
  if (!account) throw new NotFound('Account not found')
  return account
}

/** The 409 of an admin change to an account being removed, or removed (account-removal.*). */
export const ACCOUNT_REMOVED_MESSAGE = 'Account is removed: it can no longer be changed'

/**
 * The account, for a change to it or to what it holds (the admin API's writes): 404 when there is no such
 * account, 409 when it is being removed or was removed (`DELETE /v1/admin/accounts/:id`).
 */
export async function requireChangeableAccount(db: Database, accountId: string): Promise<Account> {
  const account = await getAccount(db, accountId)
  if (account?.status !== 'removed' && account) return account
  if (account || (await findRemovalOf(db, accountId))) throw new Conflict(ACCOUNT_REMOVED_MESSAGE)
  throw new NotFound('Account not found')
}

/** What a third-party app may call in an hour in one account, by the account's tier (1,000 to 10,000). */
export const API_REQUESTS_PER_HOUR_BY_TIER: Record<AccountTier, number> = {
  basic: 1_000,
  pro: 5_000,
  enterprise: 10_000,
}

export async function apiRequestsPerHour(db: Database, accountId: string): Promise<number> {
  const account = await findAccount(db, accountId)
  return API_REQUESTS_PER_HOUR_BY_TIER[account?.tier ?? 'basic']
}

export async function getAccountStatus(db: Database, accountId: string): Promise<AccountStatus | null> {
  return (await findAccount(db, accountId))?.status ?? null
}

/**
 * What a public route (a visitor's link or form, a provider's event: no token of the account) does for
 * the account it found: `visit` shows or records (a page, a click, an unsubscribe); `share` also hands
 * what it received on, to the account's apps (`contact.created`) or to whom the account sends to.
 */
export type PublicUse = 'visit' | 'share'

/**
 * Whether a public route still serves the account, read from the database at each call so that it holds
 * from the commit of a removal on, on every instance. A removed account (status `removed` from its DELETE,
 * no row once its removal is done) is served by none, so that it is answered as an unknown one; a
 * suspended account only by `visit`, as it may no longer send data out.
 */
export async function isAccountServing(db: Database, accountId: string, use: PublicUse): Promise<boolean> {
  const status = await getAccountStatus(db, accountId)
  return status === 'active' || (status === 'suspended' && use === 'visit')
}

/** Told of committed changes to who may use an account, so that tokens follow them within seconds. */
export type AccessChanges = Pick<AccountAccess, 'changed'>

/**
 * Changes the account. A new status takes effect on every instance within seconds (account-access.ts):
 * a suspended account's tokens, its users' and its apps', are refused until it is active again.
 */
export async function updateAccount(
  db: Database,
  access: AccessChanges,
  accountId: string,
  patch: Partial<Omit<AccountInput, 'parent_account'>>,
): Promise<Account> {
  await requireChangeableAccount(db, accountId)
  const row = await updateAccountRow(db, accountId, {
    name: patch.name,
    status: patch.status,
    tier: patch.tier,
    ...(patch.listings_entity !== undefined && {
      listingsEntity: patch.listings_entity,
      listingsStatus: patch.listings_entity !== '',
    }),
  })
  if (!row) throw new NotFound('Account not found')
  if (patch.status !== undefined) await access.changed(accountId)
  return accountView(row)
}

const membershipView = (row: MembershipRow): Membership => ({
  account_id: row.accountId,
  main: row.main,
  conversation_id: row.conversationId,
})

function userView(row: UserRow, memberships: MembershipRow[]): User {
  return {
    _id: row.id,
    email: row.email,
    name: row.name,
    first_name: row.firstName,
    last_name: row.lastName,
    phone: row.phone,
    image: row.image,
    memberships: memberships.map(membershipView),
    permissions: row.permissions as UserPermission[],
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }
}

export interface UserInput {
  email: string
  password: string
  name: string
  first_name?: string
  last_name?: string
  phone?: string
  image?: string
  account_id?: string
  main?: boolean
}

export async function createUser(db: Database, input: UserInput): Promise<User> {
  const passwordHash = await hash(input.password)
  return inTransaction(db, async (tx) => {
    const [firstName = '', ...rest] = input.name.trim().split(/\s+/)
    const row = await insertUser(tx, {
      email: input.email.trim(),
      name: input.name,
      firstName: input.first_name ?? firstName,
      lastName: input.last_name ?? rest.join(' '),
      phone: input.phone,
      image: input.image,
      passwordHash,
    })
    if (!row) throw new Conflict('A user with this email already exists')
    if (input.account_id) await addMembership(tx, row.id, input.account_id, input.main ?? false)
    return userView(row, await listMembershipsOfUser(tx, row.id))
  })
}

export async function getUser(db: Database, userId: string): Promise<User> {
  const row = await findUser(db, userId)
  if (!row) throw new NotFound('User not found')
  return userView(row, await listMembershipsOfUser(db, userId))
}

/** Replaces the user's platform-wide permissions (granted by an operator through the admin API or CLI). */
export async function setUserPermissions(
  db: Database,
  userId: string,
  permissions: UserPermission[],
): Promise<User> {
  const row = await setUserPermissionsRow(db, userId, [...new Set(permissions)].sort())
  if (!row) throw new NotFound('User not found')
  return userView(row, await listMembershipsOfUser(db, userId))
}

/** Whether the user holds the platform-wide permission (e.g. `funnel_templates:admin`). */
export function userHasPermission(
  db: Database,
  userId: string,
  permission: UserPermission,
): Promise<boolean> {
  return userHoldsPermission(db, userId, permission)
}

/**
 * Whether the parent may write into the account: its sub-account, and active. A removed sub-account (its rows
 * going) or a suspended one is answered as no sub-account at all.
 */
export async function isActiveSubAccountOf(
  db: Database,
  accountId: string,
  parentAccountId: string,
): Promise<boolean> {
  const account = await findAccount(db, accountId)
  return account?.parentAccount === parentAccountId && account.status === 'active'
}

/** Whether `accountId` is one of the sub-accounts of `parentAccountId` (an agency's client account). */
export function isSubAccountOf(db: Database, accountId: string, parentAccountId: string): Promise<boolean> {
  return isChildAccount(db, parentAccountId, accountId)
}

/** Makes the user a member of the account, with a chat identity there; `main` marks their main account. */
export async function addMembership(
  db: Database,
  userId: string,
  accountId: string,
  main: boolean,
): Promise<Membership> {
  return inTransaction(db, async (tx) => {
    // Locked, so that a removal of the user (user-admin.service.ts) either waits for this membership and
    // ends it, or is committed first and the user is found removed: never a member again after it.
    if (!(await lockUser(tx, userId))) throw new NotFound('User not found')
    await requireChangeableAccount(tx, accountId)
    return membershipView(await upsertMembership(tx, accountId, userId, main))
  })
}

/** Adds the membership, and lets a user added back in at once on every instance. */
export async function addMember(
  db: Database,
  access: AccessChanges,
  input: { userId: string; accountId: string; main: boolean },
): Promise<Membership> {
  const membership = await addMembership(db, input.userId, input.accountId, input.main)
  await access.changed(input.accountId, input.userId)
  return membership
}

/** Announced in the transaction that removes a member: the oauth module revokes the user's grants there. */
export const MEMBERSHIP_REMOVED = 'membership.removed'

export const NOT_A_MEMBER = 'User is not a member of this account'

/**
 * Ends the user's access to the account: the membership goes, the modules that hold the user's access there
 * act in the same transaction (`MEMBERSHIP_REMOVED`), and once committed every instance refuses the user's
 * tokens for the account within seconds, however long they were minted for.
 */
export async function removeMember(
  db: Database,
  deps: { changes: Changes; access: AccessChanges },
  accountId: string,
  userId: string,
): Promise<{ account_id: string; user_id: string }> {
  await inTransaction(db, async (tx) => {
    await requireChangeableAccount(tx, accountId)
    if (!(await findUser(tx, userId))) throw new NotFound('User not found')
    if (!(await deleteMembership(tx, accountId, userId))) throw new NotFound(NOT_A_MEMBER)
    await deps.changes.announce(tx, accountId, MEMBERSHIP_REMOVED, { user_id: userId })
  })
  await deps.access.changed(accountId, userId)
  return { account_id: accountId, user_id: userId }
}

/** The account's status and the user's membership, for the platform's check of every call (account-access.ts). */
export function accountStanding(db: Database, accountId: string, userId: string): Promise<AccountStanding> {
  return findAccountStanding(db, accountId, userId)
}

/** A platform JWT for a member of an account, carrying their chat identity as `conversation.id`. */
export async function mintPlatformToken(
  db: Database,
  tokens: PlatformTokens,
  input: { user_id: string; account_id: string; ttl: number },
): Promise<{ token: string; expires_at: string }> {
  const account = await requireChangeableAccount(db, input.account_id)
  const membership = await findMembership(db, input.account_id, input.user_id)
  if (!membership) throw new NotFound(NOT_A_MEMBER)
  const token = await tokens.sign(
    {
      uid: input.user_id,
      account_id: account._id,
      parent_account: account.parent_account,
      conversation: { id: membership.conversationId },
    },
    input.ttl,
  )
  return { token, expires_at: new Date(Date.now() + input.ttl * 1000).toISOString() }
}
