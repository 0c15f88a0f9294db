import { and, eq, getTableColumns, gte, isNull, ne, or, type Placeholder, type SQL, sql } from 'drizzle-orm'
import type { Database } from '../../platform/db/connection.js'
import { newId } from '../../platform/db/ids.js'
import { preparedStatement } from '../../platform/db/prepared.js'
import { accountIsActive, isMemberOfAccount } from '../accounts/account-access.service.js'
import { grantAuditInsert } from './audit.repository.js'
import { oauthCodes, oauthRefreshTokens } from './tables.js'

export type CodeRow = typeof oauthCodes.$inferSelect
export type RefreshTokenRow = typeof oauthRefreshTokens.$inferSelect

/** An instant a rule is judged at: a value, or a placeholder of a prepared statement. */
type Instant = Date | Placeholder

// The rules, written once: the one-statement paths use them as conditions, and the transactions that
// decide the other cases read them as verdicts of the row (`usable`, `inForce`, `withinGrace`).

/** RFC 6749 4.1.2: a code serves once, for a short time: while unused and unexpired. */
const usableCode = (now: Instant) => and(isNull(oauthCodes.usedAt), gte(oauthCodes.expiresAt, now)) as SQL

/** A refresh token in force: neither revoked nor expired. */
const refreshTokenInForce = (now: Instant) =>
  and(isNull(oauthRefreshTokens.revokedAt), gte(oauthRefreshTokens.expiresAt, now)) as SQL

/** A grant's current refresh token: in force and not replaced yet. */
export const liveRefreshToken = (now: Instant) =>
  and(refreshTokenInForce(now), isNull(oauthRefreshTokens.replacedAt)) as SQL

/**
 * Who a grant acts for may still be acted for: the account is active (a suspended one's grants wait,
 * unchanged, for its reactivation), and the user is still its member (RFC 6749 6: the refresh token stands
 * for the owner's authorization, which ends with the membership).
 */
const grantHolderVerdicts = (table: typeof oauthCodes | typeof oauthRefreshTokens) => ({
  accountActive: accountIsActive(table.accountId),
  member: isMemberOfAccount(table.accountId, table.userId),
})

/** Not replaced, or replaced at `graceStart` or later: a replaced token serves for the grace period. */
const replacedWithinGrace = (graceStart: Instant) =>
  or(isNull(oauthRefreshTokens.replacedAt), gte(oauthRefreshTokens.replacedAt, graceStart)) as SQL

/** When a refresh token is judged, and how long a replaced one stays usable. */
export interface RefreshClock {
  now: Date
  /** OAUTH_REFRESH_GRACE_SECONDS */
  graceSeconds: number
}

/** The verdicts of the refresh token rules on a row, selected with it. */
function refreshTokenVerdicts({ now, graceSeconds }: RefreshClock) {
  const inForce = refreshTokenInForce(now)
  const withinGrace = replacedWithinGrace(new Date(now.getTime() - graceSeconds * 1000))
  const { accountActive, member } = grantHolderVerdicts(oauthRefreshTokens)
  return {
    inForce: sql<boolean>`${inForce}`,
    withinGrace: sql<boolean>`${withinGrace}`,
    accountActive: sql<boolean>`${accountActive}`,
    member: sql<boolean>`${member}`,
    usable: sql<boolean>`${and(inForce, withinGrace, accountActive, member)}`,
  }
}

export type JudgedRefreshToken = RefreshTokenRow & {
  inForce: boolean
  withinGrace: boolean
  accountActive: boolean
  member: boolean
  usable: boolean
}

/** The code, locked until the transaction ends, whether it is usable now, and whether its grant may be. */
export async function findCodeForUpdate(
  db: Database,
  codeHash: string,
  now: Date,
): Promise<(CodeRow & { usable: boolean; accountActive: boolean; member: boolean }) | undefined> {
  const { accountActive, member } = grantHolderVerdicts(oauthCodes)
  const [row] = await db
    .select({
      ...getTableColumns(oauthCodes),
      usable: sql<boolean>`${usableCode(now)}`,
      accountActive: sql<boolean>`${accountActive}`,
      member: sql<boolean>`${member}`,
    })
    .from(oauthCodes)
    .where(eq(oauthCodes.codeHash, codeHash))
    .for('update')
  return row
}

export async function markCodeUsed(db: Database, accountId: string, id: string, now: Date): Promise<void> {
  await db
    .update(oauthCodes)
    .set({ usedAt: now })
    .where(and(eq(oauthCodes.accountId, accountId), eq(oauthCodes.id, id)))
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
      where code_hash = ${sql.placeholder('codeHash')} and ${usableCode(sql.placeholder('now'))}
        and client_id = ${sql.placeholder('clientId')}
        and redirect_uri = ${sql.placeholder('redirectUri')}
        and code_challenge is not distinct from ${sql.placeholder('codeChallenge')}::text
        and ${and(...Object.values(grantHolderVerdicts(oauthCodes)))}
      returning id as code_id, client_id, user_id, account_id, scopes
    ),
    audited as (${grantAuditInsert('used', 'token.issued')}),
    issued as (${grantRefreshTokenInsert('used')})
    select * from used`,
)

/**
 * A code exchange that succeeds, in one statement (a prepared one): uses the code if it is usable, the
 * client's, issued for this redirect URI and PKCE challenge (null: none), and its grant may act
 * (grantHolderVerdicts), and stores the grant's first refresh token and the audit record with it.
 * Undefined, with nothing written, otherwise.
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
        and ${liveRefreshToken(sql.placeholder('now'))}
        and ${and(...Object.values(grantHolderVerdicts(oauthRefreshTokens)))}
        and scopes @> string_to_array(${sql.placeholder('requestedScope')}::text, ' ')
      returning id, code_id, client_id, user_id, account_id, scopes
    ),
    revoked as (
      update ${oauthRefreshTokens} as other set revoked_at = ${sql.placeholder('now')}
      from replaced
      where other.account_id = replaced.account_id and other.code_id = replaced.code_id
        and other.revoked_at is null and other.id <> replaced.id
    ),
    audited as (${grantAuditInsert('replaced', 'token.refreshed')}),
    issued as (${grantRefreshTokenInsert('replaced')})
    select code_id, client_id, user_id, account_id, scopes from replaced`,
)

/**
 * A refresh that succeeds, in one statement (a prepared one), for the grant's live token: replaces it if it
 * is the client's, its grant may still act (grantHolderVerdicts) and it holds the requested scope (space-
 * separated; '' for all), revokes the grant's other tokens, and stores the new token and the audit record.
 * Undefined, with nothing written, otherwise. A token replaced already is for a transaction to refresh: the
 * grant's tokens issued meanwhile must be seen, which one statement's snapshot cannot; here a concurrent
 * refresh of the same token waits for the row, finds it replaced and writes nothing.
 */
export async function replaceRefreshToken(
  db: Database,
  token: { tokenHash: string; clientId: string; requestedScope: string },
  next: { tokenHash: string; expiresAt: Date },
  ip: string | null,
): Promise<IssuedGrant | undefined> {
  const [row] = await replaceRefreshTokenStatement(db, {
    replacedHash: token.tokenHash,
    clientId: token.clientId,
    requestedScope: token.requestedScope,
    tokenHash: next.tokenHash,
    expiresAt: next.expiresAt,
    now: new Date(),
    tokenId: newId(),
    auditId: newId(),
    ip,
  })
  return row && issuedGrant(row)
}

/** The refresh token with the verdicts of the rules on it (the query both finders share). */
const judgedRefreshToken = (db: Database, tokenHash: string, clock: RefreshClock) =>
  db
    .select({ ...getTableColumns(oauthRefreshTokens), ...refreshTokenVerdicts(clock) })
    .from(oauthRefreshTokens)
    .where(eq(oauthRefreshTokens.tokenHash, tokenHash))

/** The refresh token with the verdicts of the rules, locked until the transaction ends: refreshes take turns. */
export async function findRefreshTokenForUpdate(
  db: Database,
  tokenHash: string,
  clock: RefreshClock,
): Promise<JudgedRefreshToken | undefined> {
  const [row] = await judgedRefreshToken(db, tokenHash, clock).for('update')
  return row
}

/** The refresh token with the verdicts of the rules on it. */
export async function findJudgedRefreshToken(
  db: Database,
  tokenHash: string,
  clock: RefreshClock,
): Promise<JudgedRefreshToken | undefined> {
  const [row] = await judgedRefreshToken(db, tokenHash, clock)
  return row
}

/** Replaces the token: it stays usable for the grace period from the first replacement. */
export async function markRefreshTokenReplaced(db: Database, accountId: string, id: string): Promise<void> {
  await db
    .update(oauthRefreshTokens)
    .set({ replacedAt: sql`coalesce(${oauthRefreshTokens.replacedAt}, now())`, lastUsed: new Date() })
    .where(and(eq(oauthRefreshTokens.accountId, accountId), eq(oauthRefreshTokens.id, id)))
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
