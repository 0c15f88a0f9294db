import { sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { oauthRefreshTokens } from './tables.js'

// A grant keeps one live refresh token at least until it is revoked (a refresh replaces the token it
// revokes), so a grant without one is revoked; the partial index on live tokens by grant answers it.
const grantRevokedStatement = preparedStatement<{ revoked: boolean }>(
  'oauth_grant_revoked',
  sql`select not exists (
      select 1 from ${oauthRefreshTokens}
      where code_id = ${sql.placeholder('grantId')} and revoked_at is null
    ) as revoked`,
)

/** Whether the grant (the id of the code that started it) is revoked: none of its refresh tokens is live. */
export async function isGrantRevoked(db: Database, grantId: string): Promise<boolean> {
  const [row] = await grantRevokedStatement(db, { grantId })
  return row?.revoked === true
}
