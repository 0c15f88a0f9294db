import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { RevokedGrants } from '../../platform/auth/revoked-grants.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { RecordChange } from '../../platform/events/changes.js'
import { NotFound } from '../../platform/http/errors.js'
import { MEMBERSHIP_REMOVED } from '../accounts/accounts.service.js'
import { USER_PASSWORD_RESET } from '../accounts/user-admin.service.js'
import { recordAudit } from './audit.service.js'
import {
  deleteConsent,
  deleteConsentsOfMember,
  findGrantRevoked,
  listConsents,
  revokeRefreshTokensOfUser,
} from './grants.repository.js'
import type { Grant } from './grants.schemas.js'

/** The apps the caller allowed in their account, with the scopes allowed. */
export async function listGrants(db: Database, auth: AuthContext): Promise<Grant[]> {
  return (await listConsents(db, auth.account_id, auth.uid)).map((row) => ({
    client_id: row.clientId,
    app_name: row.appName,
    scopes: row.scopes,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  }))
}

/**
 * Takes back what the caller allowed an app in their account: the consent goes (the app must ask again),
 * every refresh token it holds from them there is revoked, and the access tokens of those grants are
 * refused from then on (`revokedGrants`).
 */
export async function revokeGrant(
  db: Database,
  revokedGrants: Pick<RevokedGrants, 'announce'>,
  auth: AuthContext,
  clientId: string,
  ip: string,
): Promise<void> {
  const grantIds = await inTransaction(db, async (tx) => {
    if (!(await deleteConsent(tx, auth.account_id, auth.uid, clientId))) throw new NotFound('Grant not found')
    const revoked = await revokeRefreshTokensOfUser(tx, auth.account_id, auth.uid, clientId)
    await recordAudit(tx, {
      event: 'grant.revoked',
      clientId,
      userId: auth.uid,
      accountId: auth.account_id,
      ip,
      detail: { reason: 'user' },
    })
    return revoked.map((grant) => grant.grantId)
  })
  await revokedGrants.announce(grantIds)
}

/** The changes to a member that take back their grants in the account, with the audit record's reason. */
const GRANTS_REVOKED_BY: Record<string, string> = {
  [MEMBERSHIP_REMOVED]: 'member_removed',
  [USER_PASSWORD_RESET]: 'password_reset',
}

/**
 * A member removed from an account, or whose password an operator reset, takes back in the same transaction
 * what they allowed every app there: the consents go and every refresh token is revoked. Their access tokens
 * are refused from then on by `revokedGrants` once it reads their grants as revoked (within
 * OAUTH_REVOCATION_CACHE_MS) and, for a removed member, at once by the platform's check of membership
 * (account-access.ts).
 */
export async function revokeGrantsOfMember(tx: Database, change: RecordChange): Promise<void> {
  const reason = GRANTS_REVOKED_BY[change.event]
  if (!reason) return
  const accountId = change.account_id
  const userId = (change.data as { user_id: string }).user_id
  const revoked = await revokeRefreshTokensOfUser(tx, accountId, userId)
  const apps = new Set([
    ...(await deleteConsentsOfMember(tx, accountId, userId)),
    ...revoked.map((g) => g.clientId),
  ])
  for (const clientId of apps) {
    const grants = revoked.filter((grant) => grant.clientId === clientId).length
    await recordAudit(tx, {
      event: 'grant.revoked',
      clientId,
      userId,
      accountId,
      detail: { reason, grants },
    })
  }
}

/**
 * Whether the grant (the id of the code that started it) is revoked, for the platform's check of access
 * tokens (revoked-grants.ts).
 */
export function isGrantRevoked(db: Database, grantId: string): Promise<boolean> {
  return findGrantRevoked(db, grantId)
}
