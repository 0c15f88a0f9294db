import { and, desc, eq, isNull, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { oauthApps, oauthConsents, oauthRefreshTokens } from './tables.js'

export type ConsentRow = typeof oauthConsents.$inferSelect

export async function findConsent(
  db: Database,
  accountId: string,
  userId: string,
  clientId: string,
): Promise<ConsentRow | undefined> {
  const [row] = await db
    .select()
    .from(oauthConsents)
    .where(
      and(
        eq(oauthConsents.accountId, accountId),
        eq(oauthConsents.userId, userId),
        eq(oauthConsents.clientId, clientId),
      ),
    )
  return row
}

/** Records the consent, adding the scopes to those allowed before. */
export async function mergeConsent(
  db: Database,
  accountId: string,
  values: { userId: string; clientId: string; scopes: string[] },
): Promise<void> {
  await db
    .insert(oauthConsents)
    .values({ accountId, ...values })
    .onConflictDoUpdate({
      target: [oauthConsents.accountId, oauthConsents.userId, oauthConsents.clientId],
      set: {
        scopes: sql`array(select distinct unnest(${oauthConsents.scopes} || excluded.scopes) order by 1)`,
        updatedAt: new Date(),
      },
    })
}

/** The user's consents in the account, with each app's name, newest first. */
export function listConsents(db: Database, accountId: string, userId: string) {
  return db
    .select({
      clientId: oauthConsents.clientId,
      appName: oauthApps.name,
      scopes: oauthConsents.scopes,
      createdAt: oauthConsents.createdAt,
      updatedAt: oauthConsents.updatedAt,
    })
    .from(oauthConsents)
    .innerJoin(oauthApps, eq(oauthApps.id, oauthConsents.clientId))
    .where(and(eq(oauthConsents.accountId, accountId), eq(oauthConsents.userId, userId)))
    .orderBy(desc(oauthConsents.updatedAt))
}

export async function deleteConsent(
  db: Database,
  accountId: string,
  userId: string,
  clientId: string,
): Promise<boolean> {
  const rows = await db
    .delete(oauthConsents)
    .where(
      and(
        eq(oauthConsents.accountId, accountId),
        eq(oauthConsents.userId, userId),
        eq(oauthConsents.clientId, clientId),
      ),
    )
    .returning({ clientId: oauthConsents.clientId })
  return rows.length === 1
}

/**
 * Revokes every live refresh token the user gave the app (without `clientId`: any app) in the account;
 * answers each grant they were of, with its app.
 */
export async function revokeRefreshTokensOfUser(
  db: Database,
  accountId: string,
  userId: string,
  clientId?: string,
): Promise<{ grantId: string; clientId: string }[]> {
  const rows = await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(oauthRefreshTokens.accountId, accountId),
        eq(oauthRefreshTokens.userId, userId),
        clientId === undefined ? undefined : eq(oauthRefreshTokens.clientId, clientId),
        isNull(oauthRefreshTokens.revokedAt),
      ),
    )
    .returning({ grantId: oauthRefreshTokens.codeId, clientId: oauthRefreshTokens.clientId })
  return [...new Map(rows.map((row) => [row.grantId, row])).values()]
}

/** Forgets what the user allowed every app in the account; answers the apps. */
export async function deleteConsentsOfMember(
  db: Database,
  accountId: string,
  userId: string,
): Promise<string[]> {
  const rows = await db
    .delete(oauthConsents)
    .where(and(eq(oauthConsents.accountId, accountId), eq(oauthConsents.userId, userId)))
    .returning({ clientId: oauthConsents.clientId })
  return rows.map((row) => row.clientId)
}

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
export async function findGrantRevoked(db: Database, grantId: string): Promise<boolean> {
  const [row] = await grantRevokedStatement(db, { grantId })
  return row?.revoked === true
}
