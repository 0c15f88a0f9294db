import { randomBytes } from 'node:crypto'
import { hash } from '@node-rs/argon2'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { Changes } from '../../platform/events/changes.js'
import { NotFound } from '../../platform/http/errors.js'
import { type AccessChanges, MEMBERSHIP_REMOVED } from './accounts.service.js'
import {
  deleteMembershipsOfUser,
  eraseUser,
  listAccountIdsOfUser,
  lockUser,
  resetPasswordHash,
} from './user-admin.repository.js'

/**
 * Announced, in the transaction that resets a user's password, in each account the user is a member of:
 * the oauth module revokes what the user allowed apps there, as the old password may have been someone else's.
 */
export const USER_PASSWORD_RESET = 'user.password_reset'

const USER_NOT_FOUND = 'User not found'

/**
 * `DELETE /v1/admin/users/:id`: in one transaction every membership of the user ends (each announced as
 * `MEMBERSHIP_REMOVED`, so that the user's grants there are revoked) and the person is erased from the
 * user's row, which stays as a mark: every token naming the user is then refused, on every instance within
 * seconds, as a former member's. What the user wrote stays with each account, under their chat identity.
 * A second removal answers 404, as the user is no more.
 */
export async function removeUser(
  db: Database,
  deps: { changes: Changes; access: AccessChanges },
  userId: string,
): Promise<{ _id: string; removed_at: string; account_ids: string[] }> {
  const { accountIds, removedAt } = await inTransaction(db, async (tx) => {
    if (!(await lockUser(tx, userId))) throw new NotFound(USER_NOT_FOUND)
    const accountIds = await deleteMembershipsOfUser(tx, userId)
    for (const accountId of accountIds)
      await deps.changes.announce(tx, accountId, MEMBERSHIP_REMOVED, { user_id: userId })
    return { accountIds, removedAt: await eraseUser(tx, userId) }
  })
  for (const accountId of accountIds) await deps.access.changed(accountId, userId)
  return { _id: userId, removed_at: removedAt.toISOString(), account_ids: accountIds }
}

/** A generated password: 144 random bits, 24 characters that survive a copy from a terminal. */
const generatePassword = () => randomBytes(18).toString('base64url')

/**
 * `POST /v1/admin/users/:id/password`: the password given, or a generated one answered this once. The old
 * one stops working at once; so do the user's OAuth grants (`USER_PASSWORD_RESET`) and every session of the
 * user: platform JWTs issued before the reset (or in its second) are refused (401 SESSIONS_ENDED), on every
 * instance within seconds, as a former member's are. The reset is timed by this instance's clock, the one
 * its own tokens are issued by.
 */
export async function resetPassword(
  db: Database,
  deps: { changes: Changes; access: AccessChanges },
  userId: string,
  given: string | undefined,
): Promise<{ _id: string; password: string | null }> {
  const password = given ?? generatePassword()
  // Hashed before the transaction: argon2 takes tens of milliseconds, no row need wait for it.
  const passwordHash = await hash(password)
  const accountIds = await inTransaction(db, async (tx) => {
    if (!(await resetPasswordHash(tx, userId, passwordHash, new Date()))) throw new NotFound(USER_NOT_FOUND)
    const accountIds = await listAccountIdsOfUser(tx, userId)
    for (const accountId of accountIds)
      await deps.changes.announce(tx, accountId, USER_PASSWORD_RESET, { user_id: userId })
    return accountIds
  })
  for (const accountId of accountIds) await deps.access.changed(accountId, userId)
  return { _id: userId, password: given === undefined ? password : null }
}
