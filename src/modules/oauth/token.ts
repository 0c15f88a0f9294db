import { createHash, randomBytes, randomUUID } from 'node:crypto'
import { decodeJwt, SignJWT } from 'jose'
import type { Config } from '../../config.js'
import { isAccessToken } from '../../platform/auth/access-tokens.js'
import type { OAuthKeys } from '../../platform/auth/oauth-keys.js'
import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { getAccount } from '../accounts/service.js'
import { clientSecretMatches } from './apps.js'
import { sha256 } from './authorize.js'
import {
  type AppRow,
  findApp,
  findCode,
  findRefreshToken,
  findRefreshTokenForUpdate,
  insertRefreshToken,
  markRefreshTokenReplaced,
  revokeRefreshTokensOfCode,
  useCode,
} from './repository.js'

export const ACCESS_TOKEN_SECONDS = 3600
const REFRESH_TOKEN_DAYS = 90

/** An RFC 6749 5.2 error: the token endpoint answers `{ error, error_description }` with this status. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(description)
  }
}

const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description)
const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)

export interface TokenContext {
  db: Database
  config: Config
  keys: OAuthKeys
  /** Seconds a replaced refresh token stays usable (OAUTH_REFRESH_GRACE_SECONDS). */
  refreshGraceSeconds: number
}

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}

/** `Basic base64(client_id:client_secret)`, each form-urlencoded first (RFC 6749 2.3.1). */
function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim())
  const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : ''
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  try {
    const unescape = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '))
    return { id: unescape(decoded.slice(0, colon)), secret: unescape(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

/**
 * The client, authenticated by HTTP Basic or by `client_id` and `client_secret` in the body (one method
 * only). A public app authenticates with its id alone: PKCE then proves it started the authorization.
 */
export async function authenticateClient(
  ctx: TokenContext,
  request: { authorization?: string; body: Record<string, unknown> },
): Promise<AppRow> {
  const basic = request.authorization?.trim().toLowerCase().startsWith('basic ')
  const failed = () => new OAuthError(401, 'invalid_client', 'Client authentication failed')
  const bodySecret = text(request.body.client_secret)
  if (basic && bodySecret) {
    throw new OAuthError(400, 'invalid_request', 'Use one client authentication method, not two')
  }
  const credentials = basic
    ? basicCredentials(request.authorization as string)
    : { id: text(request.body.client_id) ?? '', secret: bodySecret }
  if (!credentials?.id || !isId(credentials.id)) throw failed()
  const app = await findApp(ctx.db, credentials.id)
  if (!app) throw failed()
  if (credentials.secret === undefined) {
    if (!app.isPublic) throw failed()
  } else if (!clientSecretMatches(ctx.config, app, credentials.secret)) {
    throw failed()
  }
  return app
}

async function signAccessToken(
  ctx: TokenContext,
  db: Database,
  grant: { clientId: string; userId: string; accountId: string; scopes: string[] },
): Promise<string> {
  const signing = ctx.keys.signing
  if (!signing) throw new OAuthError(503, 'temporarily_unavailable', 'OAUTH_SIGNING_KEY is not set')
  const account = await getAccount(db, grant.accountId)
  return new SignJWT({
    type: 'access_token',
    uid: grant.userId,
    account_id: grant.accountId,
    parent_account: account?.parent_account ?? null,
    client_id: grant.clientId,
    scope: grant.scopes.join(' '),
  })
    .setProtectedHeader({ alg: 'ES256', kid: signing.kid, typ: 'at+jwt' })
    .setIssuer(ctx.config.publicBaseUrl)
    .setAudience(ctx.config.publicBaseUrl)
    .setIssuedAt()
    .setExpirationTime(`${ACCESS_TOKEN_SECONDS}s`)
    .setJti(randomUUID())
    .sign(signing.key)
}

/** A new access token and refresh token of the grant (the code `codeId` started). */
async function issueTokens(
  ctx: TokenContext,
  tx: Database,
  grant: { codeId: string; clientId: string; userId: string; accountId: string; scopes: string[] },
): Promise<TokenResponse> {
  const refreshToken = randomBytes(32).toString('base64url')
  await insertRefreshToken(tx, {
    tokenHash: sha256(refreshToken),
    codeId: grant.codeId,
    clientId: grant.clientId,
    userId: grant.userId,
    accountId: grant.accountId,
    scopes: grant.scopes,
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_DAYS * 86_400_000),
  })
  return {
    access_token: await signAccessToken(ctx, tx, grant),
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    scope: grant.scopes.join(' '),
  }
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url')

/** The authorization code grant (RFC 6749 4.1.3, RFC 7636 4.6). A replayed code revokes what it gave. */
export async function exchangeCode(
  ctx: TokenContext,
  app: AppRow,
  body: Record<string, unknown>,
): Promise<TokenResponse> {
  const code = text(body.code)
  const redirectUri = text(body.redirect_uri)
  if (!code) throw new OAuthError(400, 'invalid_request', 'code is required')
  if (!redirectUri) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required')
  const outcome = await inTransaction(ctx.db, async (tx) => {
    const row = await useCode(tx, sha256(code))
    if (!row) {
      const replayed = await findCode(tx, sha256(code))
      if (replayed) await revokeRefreshTokensOfCode(tx, replayed.id)
      return { refused: 'The code is unknown, expired or already used' }
    }
    if (row.clientId !== app.id || row.expiresAt.getTime() < Date.now()) {
      return { refused: 'The code is unknown, expired or already used' }
    }
    if (row.redirectUri !== redirectUri)
      return { refused: 'redirect_uri does not match the authorization request' }
    const verifier = text(body.code_verifier)
    // A verifier for a code issued without a challenge is refused too: it would hide a PKCE downgrade.
    if ((row.codeChallenge ?? undefined) !== (verifier === undefined ? undefined : s256(verifier))) {
      return { refused: 'code_verifier does not match the code_challenge' }
    }
    return { tokens: await issueTokens(ctx, tx, grantOf(row.id, row)) }
  })
  // Refusals commit (the code stays used, a replay's tokens stay revoked) before they are answered.
  if (outcome.refused !== undefined) throw invalidGrant(outcome.refused)
  return outcome.tokens as TokenResponse
}

/** What tokens are issued for: the grant started by the code `codeId`, as the row carries it. */
const grantOf = (
  codeId: string,
  row: { clientId: string; userId: string; accountId: string; scopes: string[] },
) => ({
  codeId,
  clientId: row.clientId,
  userId: row.userId,
  accountId: row.accountId,
  scopes: row.scopes,
})

/**
 * The refresh grant (RFC 6749 6) with rotation: each use replaces the token. A replaced token stays usable
 * for the grace period, for a client that lost the answer (the token that answer held is then revoked);
 * used later, it is taken as stolen and the whole grant is revoked.
 */
export async function refreshTokens(
  ctx: TokenContext,
  app: AppRow,
  body: Record<string, unknown>,
): Promise<TokenResponse> {
  const token = text(body.refresh_token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required')
  const outcome = await inTransaction(ctx.db, async (tx) => {
    const row = await findRefreshTokenForUpdate(tx, sha256(token))
    if (!row || row.clientId !== app.id || row.revokedAt || row.expiresAt.getTime() < Date.now()) {
      return { refused: 'The refresh token is unknown, revoked or expired' }
    }
    if (row.replacedAt && Date.now() - row.replacedAt.getTime() > ctx.refreshGraceSeconds * 1000) {
      await revokeRefreshTokensOfCode(tx, row.codeId)
      return { refused: 'The refresh token was already used; the grant is revoked' }
    }
    await revokeRefreshTokensOfCode(tx, row.codeId, row.id)
    await markRefreshTokenReplaced(tx, row.id)
    return { tokens: await issueTokens(ctx, tx, grantOf(row.codeId, row)) }
  })
  if (outcome.refused !== undefined) throw invalidGrant(outcome.refused)
  return outcome.tokens as TokenResponse
}

/**
 * RFC 7009: revoking one of the client's refresh tokens revokes its whole grant. Unknown tokens, and
 * other clients' tokens, are answered like revoked ones (200) so that nothing can be probed. Access
 * tokens are self-contained JWTs that expire within the hour: `unsupported_token_type` says so.
 */
export async function revokeToken(
  ctx: TokenContext,
  app: AppRow,
  body: Record<string, unknown>,
): Promise<void> {
  const token = text(body.token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required')
  const row = await findRefreshToken(ctx.db, sha256(token))
  if (row?.clientId === app.id) {
    await revokeRefreshTokensOfCode(ctx.db, row.codeId)
    return
  }
  if (!row && token.split('.').length === 3) {
    throw new OAuthError(
      400,
      'unsupported_token_type',
      'Access tokens expire within the hour and are not revoked',
    )
  }
}

/**
 * RFC 7662: whether a token of the calling client is active now, and what it grants. Tokens of other
 * clients, and unknown, revoked or expired ones, are all just `{ active: false }`.
 */
export async function introspectToken(
  ctx: TokenContext & { verifyAccessToken: (token: string) => Promise<AuthContext> },
  app: AppRow,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const token = text(body.token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required')
  const inactive = { active: false }
  if (isAccessToken(token)) {
    const auth = await ctx.verifyAccessToken(token).catch(() => undefined)
    if (auth?.oauth?.client_id !== app.id) return inactive
    const { exp, iat, iss, aud, jti } = decodeJwt(token)
    return {
      active: true,
      token_type: 'Bearer',
      scope: auth.oauth.scopes.join(' '),
      client_id: app.id,
      sub: auth.uid,
      account_id: auth.account_id,
      parent_account: auth.parent_account,
      exp,
      iat,
      iss,
      aud,
      jti,
    }
  }
  const row = await findRefreshToken(ctx.db, sha256(token))
  const usable =
    row &&
    row.clientId === app.id &&
    !row.revokedAt &&
    row.expiresAt.getTime() > Date.now() &&
    (!row.replacedAt || Date.now() - row.replacedAt.getTime() <= ctx.refreshGraceSeconds * 1000)
  if (!row || !usable) return inactive
  return {
    active: true,
    token_type: 'refresh_token',
    scope: row.scopes.join(' '),
    client_id: app.id,
    sub: row.userId,
    account_id: row.accountId,
    exp: Math.floor(row.expiresAt.getTime() / 1000),
    iat: Math.floor(row.createdAt.getTime() / 1000),
  }
}
