import { and, asc, count, desc, eq, inArray, isNull, ne, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { preparedOnce, preparedStatement } from '../../platform/db/prepared.js'
import { grantAuditInsert } from './audit.repository.js'
import { oauthApps, oauthCodes, oauthRefreshTokens, oauthScopes } from './tables.js'

export type AppRow = typeof oauthApps.$inferSelect
export type ScopeRow = typeof oauthScopes.$inferSelect
export type CodeRow = typeof oauthCodes.$inferSelect
export type RefreshTokenRow = typeof oauthRefreshTokens.$inferSelect
type AppValues = Omit<typeof oauthApps.$inferInsert, 'id' | 'createdAt' | 'updatedAt'>

export function listScopes(db: Database): Promise<ScopeRow[]> {
  return db.select().from(oauthScopes).orderBy(asc(oauthScopes.category), asc(oauthScopes.scope))
}

export function findScopes(db: Database, scopes: string[]): Promise<ScopeRow[]> {
  if (scopes.length === 0) return Promise.resolve([])
  return db.select().from(oauthScopes).where(inArray(oauthScopes.scope, scopes))
}

export async function insertApp(db: Database, values: AppValues): Promise<AppRow> {
  const [row] = await db.insert(oauthApps).values(values).returning()
  if (!row) throw new Error('app insert returned no row')
  return row
}

// Prepared: every token request authenticates its client with it.
const findAppQuery = preparedOnce((db) =>
  db
    .select()
    .from(oauthApps)
    .where(eq(oauthApps.id, sql.placeholder('id')))
    .prepare('oauth_find_app'),
)

export async function findApp(db: Database, id: string): Promise<AppRow | undefined> {
  const [row] = await findAppQuery(db).execute({ id })
  return row
}

export async function updateApp(
  db: Database,
  id: string,
  changes: Partial<AppValues>,
): Promise<AppRow | undefined> {
  const [row] = await db
    .update(oauthApps)
    .set({ ...changes, updatedAt: new Date() })
    .where(eq(oauthApps.id, id))
    .returning()
  return row
}

/** Newest first. */
export async function listApps(
  db: Database,
  window: { offset: number; limit: number },
): Promise<{ rows: AppRow[]; total: number }> {
  const rows = await db
    .select()
    .from(oauthApps)
    .orderBy(desc(oauthApps.createdAt), desc(oauthApps.id))
    .offset(window.offset)
    .limit(window.limit)
  const [counted] = await db.select({ total: count() }).from(oauthApps)
  return { rows, total: counted?.total ?? 0 }
}

export async function insertCode(db: Database, values: typeof oauthCodes.$inferInsert): Promise<void> {
  await db.insert(oauthCodes).values(values)
}

/** Marks the code used, once: the row only for the first exchange, whatever runs concurrently. */
export async function useCode(db: Database, codeHash: string): Promise<CodeRow | undefined> {
  const [row] = await db
    .update(oauthCodes)
    .set({ usedAt: new Date() })
    .where(and(eq(oauthCodes.codeHash, codeHash), isNull(oauthCodes.usedAt)))
    .returning()
  return row
}

export async function findCode(db: Database, codeHash: string): Promise<CodeRow | undefined> {
  const [row] = await db.select().from(oauthCodes).where(eq(oauthCodes.codeHash, codeHash))
  return row
}

export async function insertRefreshToken(
  db: Database,
  values: Omit<typeof oauthRefreshTokens.$inferInsert, 'id' | 'createdAt'>,
): Promise<void> {
  await db.insert(oauthRefreshTokens).values(values)
}

/** The grant a new refresh token belongs to, as the statement that stored the token returns it. */
export interface IssuedGrant {
  codeId: string
  clientId: string
  userId: string
  accountId: string
  scopes: string[]
}

interface GrantColumns {
  code_id: string
  client_id: string
  user_id: string
  account_id: string
  scopes: string[]
}

const issuedGrant = (row: GrantColumns): IssuedGrant => ({
  codeId: row.code_id,
  clientId: row.client_id,
  userId: row.user_id,
  accountId: row.account_id,
  scopes: row.scopes,
})

/**
 * The insert of a new refresh token of the grant in `grants`, a CTE of the same statement (one row at most).
 * For a prepared statement: its values are the placeholders `tokenId` (a new id), `tokenHash`, `expiresAt`.
 */
function grantRefreshTokenInsert(grants: string): SQL {
  return sql`insert into ${oauthRefreshTokens}
      (id, token_hash, code_id, client_id, user_id, account_id, scopes, expires_at)
    select ${sql.placeholder('tokenId')}::text, ${sql.placeholder('tokenHash')}::text, code_id, client_id,
      user_id, account_id, scopes, ${sql.placeholder('expiresAt')}::timestamptz
    from ${sql.identifier(grants)}`
}

const useCodeForGrantStatement = preparedStatement<GrantColumns>(
  'oauth_use_code_for_grant',
  sql`with used as (
      update ${oauthCodes} set used_at = ${sql.placeholder('now')}
      where code_hash = ${sql.placeholder('codeHash')} and used_at is null
        and client_id = ${sql.placeholder('clientId')} and expires_at >= ${sql.placeholder('now')}
        and redirect_uri = ${sql.placeholder('redirectUri')}
        and code_challenge is not distinct from ${sql.placeholder('codeChallenge')}::text
      returning id as code_id, client_id, user_id, account_id, scopes
    ),
    audited as (${grantAuditInsert('used', 'token.issued')}),
    issued as (${grantRefreshTokenInsert('used')})
    select * from used`,
)

/**
 * A code exchange that succeeds, in one statement (a prepared one): uses the code if it is unused, the
 * client's, unexpired, and issued for this redirect URI and PKCE challenge (null: none), and stores the
 * grant's first refresh token and the audit record with it. Undefined, with nothing written, otherwise.
 */
export async function useCodeForGrant(
  db: Database,
  code: { codeHash: string; clientId: string; redirectUri: string; codeChallenge: string | null },
  refreshToken: { tokenHash: string; expiresAt: Date },
  ip: string | null,
): Promise<IssuedGrant | undefined> {
  const [row] = await useCodeForGrantStatement(db, {
    ...code,
    tokenHash: refreshToken.tokenHash,
    expiresAt: refreshToken.expiresAt,
    now: new Date(),
    tokenId: newId(),
    auditId: newId(),
    ip,
  })
  return row && issuedGrant(row)
}

const replaceRefreshTokenStatement = preparedStatement<GrantColumns>(
  'oauth_replace_refresh_token',
  sql`with replaced as (
      update ${oauthRefreshTokens} set replaced_at = now(), last_used = ${sql.placeholder('now')}
      where token_hash = ${sql.placeholder('replacedHash')} and client_id = ${sql.placeholder('clientId')}
        and revoked_at is null and replaced_at is null and expires_at >= ${sql.placeholder('now')}
      returning id, code_id, client_id, user_id, account_id, scopes
    ),
    revoked as (
      update ${oauthRefreshTokens} as other set revoked_at = ${sql.placeholder('now')}
      from replaced
      where other.code_id = replaced.code_id and other.revoked_at is null and other.id <> replaced.id
    ),
    audited as (${grantAuditInsert('replaced', 'token.refreshed')}),
    issued as (${grantRefreshTokenInsert('replaced')})
    select code_id, client_id, user_id, account_id, scopes from replaced`,
)

/**
 * A refresh that succeeds, in one statement (a prepared one), for a token not replaced yet: replaces it if
 * it is the client's, not revoked and unexpired, revokes the grant's other live tokens, and stores the new
 * token and the audit record. Undefined, with nothing written, otherwise. A token replaced already is for a
 * transaction to refresh: the grant's tokens issued meanwhile must be seen, which one statement's snapshot
 * cannot; here a concurrent refresh of the same token waits for the row, finds it replaced and writes nothing.
 */
export async function replaceRefreshToken(
  db: Database,
  token: { tokenHash: string; clientId: string },
  next: { tokenHash: string; expiresAt: Date },
  ip: string | null,
): Promise<IssuedGrant | undefined> {
  const [row] = await replaceRefreshTokenStatement(db, {
    replacedHash: token.tokenHash,
    clientId: token.clientId,
    tokenHash: next.tokenHash,
    expiresAt: next.expiresAt,
    now: new Date(),
    tokenId: newId(),
    auditId: newId(),
    ip,
  })
  return row && issuedGrant(row)
}

/** The refresh token, locked until the transaction ends, so that two refreshes with it take turns. */
export async function findRefreshTokenForUpdate(
  db: Database,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  const [row] = await db
    .select()
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, tokenHash))
    .for('update')
  return row
}

/** Replaces the token: it stays usable for the grace period from the first replacement. */
export async function markRefreshTokenReplaced(db: Database, id: string): Promise<void> {
  await db
    .update(oauthRefreshTokens)
    .set({ replacedAt: sql`coalesce(${oauthRefreshTokens.replacedAt}, now())`, lastUsed: new Date() })
    .where(eq(oauthRefreshTokens.id, id))
}

/** Revokes the grant's tokens that are still live; with `except`, all but that one. */
export async function revokeRefreshTokensOfCode(
  db: Database,
  codeId: string,
  except?: string,
): Promise<number> {
  const rows = await db
    .update(oauthRefreshTokens)
    .set({ revokedAt: new Date() })
    .where(
      and(
        eq(oauthRefreshTokens.codeId, codeId),
        isNull(oauthRefreshTokens.revokedAt),
        except ? ne(oauthRefreshTokens.id, except) : undefined,
      ),
    )
    .returning({ id: oauthRefreshTokens.id })
  return rows.length
}

export async function findRefreshToken(
  db: Database,
  tokenHash: string,
): Promise<RefreshTokenRow | undefined> {
  const [row] = await db.select().from(oauthRefreshTokens).where(eq(oauthRefreshTokens.tokenHash, tokenHash))
  return row
}
