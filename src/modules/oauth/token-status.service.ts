import { decodeJwt } from 'jose'
import { isAccessToken } from '../../platform/auth/access-tokens.js'
import type { AuthContext } from '../../platform/auth/platform-jwt.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { AppRow } from './apps.repository.js'
import { keptHash } from './kept-hash.js'
import { param } from './request-params.js'
import { findJudgedRefreshToken, findRefreshToken } from './token.repository.js'
import type { Introspection, OAuthForm } from './token.schemas.js'
import {
  type Grant,
  grantOf,
  OAuthError,
  refreshClock,
  revokeGrantOfCode,
  type TokenDeps,
} from './token.service.js'

type StatusDeps = TokenDeps & {
  /** An access token's caller as long as its account may act (introspection: is it active now). */
  verifyAccessToken: (token: string) => Promise<AuthContext>
  /** An access token's caller, whatever its account's standing (revocation: whose token is it). */
  readAccessToken: (token: string) => Promise<AuthContext>
}

/**
 * The grant a token belongs to, if the token is one of ours: a refresh token, whatever its state, or an
 * access token that verifies (signature, lifetime, grant not revoked), whatever its account's standing: a
 * suspended account's grant is revoked too, not kept to work again on its reactivation. The grant's id is
 * the code's.
 */
async function grantOfToken(deps: StatusDeps, token: string): Promise<Grant | undefined> {
  if (isAccessToken(token)) {
    const auth = await deps.readAccessToken(token).catch(() => undefined)
    if (!auth?.oauth) return undefined
    const { grant_id } = decodeJwt(token)
    return grantOf(grant_id as string, {
      clientId: auth.oauth.client_id,
      userId: auth.uid,
      accountId: auth.account_id,
      scopes: auth.oauth.scopes,
    })
  }
  const row = await findRefreshToken(deps.db, keptHash(token))
  return row && grantOf(row.codeId, row)
}

/**
 * RFC 7009: revoking one of the client's tokens, a refresh token or an access token, revokes its whole
 * grant: its refresh tokens, and its access tokens by the grant's id (revoked-grants.ts). For an access
 * token, 2.1: "the authorization server MAY revoke the respective refresh token as well"; a JWT cannot be
 * revoked alone without a list of revoked token ids. Unknown, expired and revoked tokens are answered 200
 * (2.2: "invalid tokens do not cause an error response"); a token of another client is refused (2.1: the
 * server "verifies whether the token was issued to the client making the revocation request. If this
 * validation fails, the request is refused"), with RFC 6749 5.2's `unauthorized_client`, and stays usable.
 */
export async function revokeToken(deps: StatusDeps, app: AppRow, body: OAuthForm): Promise<void> {
  const token = param(body.token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'token is required')
  const grant = await grantOfToken(deps, token)
  if (!grant) return
  if (grant.clientId !== app.id) {
    throw new OAuthError(400, 'unauthorized_client', 'The token was not issued to this client')
  }
  await inTransaction(deps.db, (tx) => revokeGrantOfCode(deps, tx, grant.codeId, grant, 'client_revocation'))
  await deps.revokedGrants.announce([grant.codeId])
}

/**
 * RFC 7662: whether a token of the calling client is active now, and what it grants. Tokens of other
 * clients, and unknown, revoked or expired ones, are all just `{ active: false }`.
 */
export async function introspectToken(
  deps: StatusDeps,
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
