import { createLocalJWKSet, decodeProtectedHeader, errors as joseErrors, jwtVerify } from 'jose'
import { LRUCache } from 'lru-cache'
import { isId } from '../db/ids.js'
import { Unauthorized } from '../http/errors.js'
import type { AccountAccess } from './account-access.js'
import type { OAuthKeys } from './oauth-keys.js'
import { type AuthContext, CLOCK_SKEW_SECONDS } from './platform-jwt.js'
import type { RevokedGrants } from './revoked-grants.js'

/** The JWT `typ` of OAuth access tokens (RFC 9068), which tells them from platform JWTs. */
export const ACCESS_TOKEN_TYP = 'at+jwt'

// Every token of one signer carries the same JOSE header, so each distinct header is decoded once, not
// on every request (it was a tenth of the light GET's CPU); bounded, as headers come from the caller.
const accessTokenHeaders = new LRUCache<string, boolean>({ max: 256 })

export function isAccessToken(token: string): boolean {
  const headerEnd = token.indexOf('.')
  if (headerEnd < 0) return false
  const header = token.slice(0, headerEnd)
  let isAccess = accessTokenHeaders.get(header)
  if (isAccess === undefined) {
    isAccess = typOf(header) === ACCESS_TOKEN_TYP
    accessTokenHeaders.set(header, isAccess)
  }
  return isAccess
}

function typOf(header: string): unknown {
  try {
    return decodeProtectedHeader({ protected: header }).typ
  } catch {
    return undefined
  }
}

/** The caller an access token names, verified, whatever its account's standing now. */
export type AccessTokenCaller = AuthContext & { oauth: NonNullable<AuthContext['oauth']> }

/**
 * Verifies OAuth access tokens against the published keys (signature, issuer, audience, lifetime, claims)
 * and refuses those of a revoked grant: whose token it is, as RFC 7009 2.1 judges a token to revoke, without
 * asking whether its account may still act.
 */
export function createAccessTokenReader(
  keys: OAuthKeys,
  issuer: string,
  revokedGrants: Pick<RevokedGrants, 'isRevoked'>,
): (token: string) => Promise<AccessTokenCaller> {
  const keySet = createLocalJWKSet(keys.jwks)
  return async (token) => {
    let payload: Record<string, unknown>
    try {
      ;({ payload } = await jwtVerify(token, keySet, {
        issuer,
        audience: issuer,
        algorithms: ['ES256'],
        typ: ACCESS_TOKEN_TYP,
        clockTolerance: CLOCK_SKEW_SECONDS,
      }))
    } catch (error) {
      throw new Unauthorized(
        error instanceof joseErrors.JWTExpired ? 'token expired' : 'invalid access token',
      )
    }
    const { type, uid, account_id, parent_account, client_id, scope, grant_id } = payload
    const valid =
      type === 'access_token' &&
      isId(uid) &&
      isId(account_id) &&
      (parent_account === null || isId(parent_account)) &&
      isId(client_id) &&
      typeof scope === 'string' &&
      isId(grant_id)
    if (!valid) throw new Unauthorized('invalid access token')
    if (await revokedGrants.isRevoked(grant_id)) throw new Unauthorized('access token revoked')
    return {
      uid,
      account_id,
      parent_account: parent_account as string | null,
      oauth: { client_id: client_id as string, scopes: (scope as string).split(' ').filter(Boolean) },
    }
  }
}

/**
 * Verifies OAuth access tokens as `createAccessTokenReader` does, and refuses those of a suspended account
 * and of a user no longer a member of it: the caller, with the app and its scopes.
 */
export function createAccessTokenVerifier(
  keys: OAuthKeys,
  issuer: string,
  revokedGrants: Pick<RevokedGrants, 'isRevoked'>,
  accountAccess: Pick<AccountAccess, 'refusalFor'>,
): (token: string) => Promise<AccessTokenCaller> {
  const read = createAccessTokenReader(keys, issuer, revokedGrants)
  return async (token) => {
    const caller = await read(token)
    const refusal = await accountAccess.refusalFor(caller)
    if (refusal) throw refusal
    return caller
  }
}
