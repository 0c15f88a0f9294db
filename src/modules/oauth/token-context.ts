import type { Config } from '../../config.js'
import type { OAuthKeys } from '../../platform/auth/oauth-keys.js'
import type { RevokedGrants } from '../../platform/auth/revoked-grants.js'
import type { Database } from '../../platform/db/connection.js'
import type { FailureLimit } from '../../platform/http/limits.js'

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

export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description)
export const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined)

export interface TokenContext {
  db: Database
  config: Config
  keys: OAuthKeys
  /** Seconds a replaced refresh token stays usable (OAUTH_REFRESH_GRACE_SECONDS). */
  refreshGraceSeconds: number
  /** The parent of an account, for its access tokens (`parentAccounts` in token.service.ts). */
  parentAccountOf: (db: Database, accountId: string) => Promise<string | null>
  /** Told of the grants a request revoked, once committed, so that their access tokens are refused. */
  revokedGrants: Pick<RevokedGrants, 'announce'>
  /** Failed client authentications per address (`client-auth.ts`). */
  clientAuthFailures: FailureLimit
  /** The caller's address, for the audit record. */
  ip?: string
}

export interface TokenResponse {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
  refresh_token: string
  scope: string
}
