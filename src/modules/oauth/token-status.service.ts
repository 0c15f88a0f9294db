import { decodeJwt } from 'jose'
import { isAccessToken } from '../../platform/auth/access-tokens.js'
import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { sha256 } from './authorize.service.js'
import { type AppRow, findRefreshToken } from './repository.js'
import { grantOf, revokeGrantOfCode } from './token.service.js'
import { OAuthError, type TokenContext, text } from './token-context.js'

/**
 * RFC 7009: revoking one of the client's refresh tokens revokes its whole grant, its access tokens with
 * it. Unknown tokens, and other clients' tokens, are answered like revoked ones (200) so that nothing can
 * be probed. An access token alone is not revoked (`unsupported_token_type`): its refresh token is.
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
    await inTransaction(ctx.db, (tx) =>
      revokeGrantOfCode(ctx, tx, row.codeId, grantOf(row.codeId, row), 'client_revocation'),
    )
    await ctx.revokedGrants.announce([row.codeId])
    return
  }
  if (!row && isAccessToken(token)) {
    throw new OAuthError(
      400,
      'unsupported_token_type',
      'Revoke the refresh token: the access tokens of its grant are refused with it',
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
