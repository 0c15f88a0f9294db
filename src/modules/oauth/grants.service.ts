import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { RevokedGrants } from '../../platform/auth/revoked-grants.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { NotFound } from '../../platform/http/errors.js'
import { recordAudit } from './audit.service.js'
import {
  deleteConsent,
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
    return revoked
  })
  await revokedGrants.announce(grantIds)
}

/**
 * Whether the grant (the id of the code that started it) is revoked, for the platform's check of access
 * tokens (revoked-grants.ts).
 */
export function isGrantRevoked(db: Database, grantId: string): Promise<boolean> {
  return findGrantRevoked(db, grantId)
}
