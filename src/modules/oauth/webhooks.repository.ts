import { and, eq, exists, isNotNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { oauthApps, oauthRefreshTokens } from './tables.js'
import { liveRefreshToken } from './token.repository.js'

/** A live grant of the app in the account carrying `scope`: its current refresh token carries the scope. */
const liveGrantWith = (db: Database, accountId: string, scope: string) =>
  exists(
    db
      .select({ one: sql`1` })
      .from(oauthRefreshTokens)
      .where(
        and(
          eq(oauthRefreshTokens.accountId, accountId),
          eq(oauthRefreshTokens.clientId, oauthApps.id),
          liveRefreshToken(new Date()),
          sql`${scope} = any(${oauthRefreshTokens.scopes})`,
        ),
      ),
  )

/** The apps with a webhook URL that hold a live grant with `scope` in the account. */
export async function findAppsToNotify(db: Database, accountId: string, scope: string): Promise<string[]> {
  const rows = await db
    .select({ id: oauthApps.id })
    .from(oauthApps)
    .where(and(isNotNull(oauthApps.webhookUrl), liveGrantWith(db, accountId, scope)))
  return rows.map((row) => row.id)
}

/** Whether the app still holds a live grant with `scope` in the account. */
export async function holdsLiveGrant(
  db: Database,
  accountId: string,
  clientId: string,
  scope: string,
): Promise<boolean> {
  const rows = await db
    .select({ id: oauthApps.id })
    .from(oauthApps)
    .where(and(eq(oauthApps.id, clientId), liveGrantWith(db, accountId, scope)))
  return rows.length > 0
}
