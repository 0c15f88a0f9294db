import { hash, verify } from '@node-rs/argon2'
import type { Database } from '../../platform/db/connection.js'
import { findAccountsOfUsers, findUserByEmail } from './user-search.repository.js'

export interface SignedInUser {
  _id: string
  email: string
  name: string
  accounts: { _id: string; name: string; main: boolean }[]
}

// Verified when the email is unknown, so that a wrong email takes as long as a wrong password.
const unknownUserHash = hash('no user has this password')

/** The user with this email and password, with their accounts; null when either is wrong. */
export async function verifyUserPassword(
  db: Database,
  email: string,
  password: string,
): Promise<SignedInUser | null> {
  const user = await findUserByEmail(db, email)
  const matches = await verify(user?.passwordHash ?? (await unknownUserHash), password).catch(() => false)
  if (!user || !matches) return null
  const accounts = await findAccountsOfUsers(db, [user.id])
  return {
    _id: user.id,
    email: user.email,
    name: user.name,
    accounts: accounts.map(({ accountId, name, main }) => ({ _id: accountId, name, main })),
  }
}
