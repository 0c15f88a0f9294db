import { and, eq, isNotNull, type Placeholder, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { oauthApps, oauthRefreshTokens } from './tables.js'
import { liveRefreshToken } from './token.repository.js'

/** A live grant of the app in the account carrying `scope`: its current refresh token carries the scope. */
const liveGrantWith = (
  accountId: string | Placeholder,
  scope: string | Placeholder,
  now: Date | Placeholder = new Date(),
) => sql`exists (
  select 1 from ${oauthRefreshTokens}
  where ${and(
    eq(oauthRefreshTokens.accountId, accountId),
    eq(oauthRefreshTokens.clientId, oauthApps.id),
    liveRefreshToken(now),
    sql`${scope} = any(${oauthRefreshTokens.scopes})`,
  )}
)`

// Asked in the transaction of every contact change (each form submission): one raw prepared statement,
// built once (a Drizzle prepared query is bound to the transaction that made it).
const appsToNotify = preparedStatement<{ id: string }>(
  'oauth_apps_to_notify',
  sql`select ${oauthApps.id} from ${oauthApps}
    where ${and(
      isNotNull(oauthApps.webhookUrl),
      liveGrantWith(sql.placeholder('accountId'), sql.placeholder('scope'), sql.placeholder('now')),
    )}`,
)

/** The apps with a webhook URL that hold a live grant with `scope` in the account. */
export async function findAppsToNotify(db: Database, accountId: string, scope: string): Promise<string[]> {
  const rows = await appsToNotify(db, { accountId, scope, now: new Date() })
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
    .where(and(eq(oauthApps.id, clientId), liveGrantWith(accountId, scope)))
  return rows.length > 0
}
