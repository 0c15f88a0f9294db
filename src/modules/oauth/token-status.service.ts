import { decodeJwt } from 'jose'
import { isAccessToken } from '../../platform/auth/access-tokens.js'
import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { AppRow } from './apps.repository.js'
import { keptHash } from './kept-hash.js'
import { param } from './request-params.js'
import { findJudgedRefreshToken, findRefreshToken } from './token.repository.js'
import type { Introspection, OAuthForm } from './token.schemas.js'
import { grantOf, OAuthError, refreshClock, revokeGrantOfCode, type TokenDeps } from './token.service.js'

/**
 * RFC 7009: revoking one of the client's refresh tokens revokes its whole grant, its access tokens with
 * it. Unknown tokens, and other clients' tokens, are answered like revoked ones (200) so that nothing can
 * be probed. An access token alone is not revoked (`unsupported_token_type`): its refresh token is.
 */
export async function revokeToken(deps: TokenDeps, app: AppRow, body: OAuthForm): Promise<void> {
  const token = param(body.token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required')
  const row = await findRefreshToken(deps.db, keptHash(token))
  if (row?.clientId === app.id) {
    await inTransaction(deps.db, (tx) =>
      revokeGrantOfCode(deps, tx, row.codeId, grantOf(row.codeId, row), 'client_revocation'),
    )
    await deps.revokedGrants.announce([row.codeId])
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
  deps: TokenDeps & { verifyAccessToken: (token: string) => Promise<AuthContext> },
  app: AppRow,
  body: OAuthForm,
): Promise<Introspection> {
  const token = param(body.token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required')
  const inactive = { active: false }
  if (isAccessToken(token)) {
    const auth = await deps.verifyAccessToken(token).catch(() => undefined)
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
  const row = await findJudgedRefreshToken(deps.db, keptHash(token), refreshClock(deps))
  if (!row?.usable || row.clientId !== app.id) return inactive
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
