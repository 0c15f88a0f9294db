import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import type { Database } from '../../platform/db/connection.js'
import { getAccount } from '../accounts/accounts.service.js'

/** How long a session made from the admin token lasts. */
export const SESSION_SECONDS = 12 * 3600

/** Signs a session's expiry with the admin token as the key: a new ADMIN_TOKEN ends every session. */
const sessionSignature = (adminToken: string, expires: string) =>
  createHmac('sha256', adminToken).update(`admin-outbox-session:${expires}`).digest('base64url')

/** A session cookie's value, `<expiry in Unix seconds>.<signature>`: it never holds the token itself. */
export function newSession(adminToken: string, now: Date): string {
  const expires = String(Math.floor(now.getTime() / 1000) + SESSION_SECONDS)
  return `${expires}.${sessionSignature(adminToken, expires)}`
}

/** Whether the cookie's value is a session signed with this admin token and not yet expired. */
export function isLiveSession(adminToken: string, value: string | undefined, now: Date): boolean {
  const [expires, signature, ...rest] = (value ?? '').split('.')
  if (!expires || !signature || rest.length > 0 || !/^\d{1,12}$/.test(expires)) return false
  const signed = isSameSecret(signature, sessionSignature(adminToken, expires))
  return signed && Number(expires) * 1000 > now.getTime()
}

/** The sign-in form's check, in constant time. */
export const isAdminToken = (adminToken: string, given: string) => isSameSecret(given, adminToken)

/** The accounts' names by id (an account since deleted has none). */
export async function accountNames(
  db: Database,
  accountIds: (string | undefined)[],
): Promise<Map<string, string>> {
  const ids = new Set(accountIds.filter((id) => id !== undefined))
  const accounts = await Promise.all([...ids].map((id) => getAccount(db, id)))
  return new Map(accounts.flatMap((account) => (account ? [[account._id, account.name] as const] : [])))
}
