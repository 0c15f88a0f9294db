import { type KeyObject, randomBytes, randomUUID } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import { LRUCache } from 'lru-cache'
import type { OAuthKeys } from '../../platform/auth/oauth-keys.js'
import type { RevokedGrants } from '../../platform/auth/revoked-grants.js'
import { upToEntries } from '../../platform/cache-bounds.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { FailureLimit } from '../../platform/http/limits.js'
import { getAccount } from '../accounts/accounts.service.js'
import type { AppRow } from './apps.repository.js'
import { APP_IN_DEV_MODE } from './apps.service.js'
import type { AuditEventName } from './audit.schemas.js'
import { recordAudit } from './audit.service.js'
import { keptHash } from './kept-hash.js'
import { isPkceValue, s256 } from './pkce.js'
import { param } from './request-params.js'
import {
  findCodeForUpdate,
  findRefreshTokenForUpdate,
  insertRefreshToken,
  markCodeUsed,
  markRefreshTokenReplaced,
  replaceRefreshToken,
  revokeRefreshTokensOfCode,
  useCodeForGrant,
} from './token.repository.js'
import type { OAuthForm, TokenResponse } from './token.schemas.js'

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

/** What the token endpoints depend on. */
export interface TokenDeps {
  db: Database
  /** The server's issuer identifier (PUBLIC_BASE_URL): the `iss` and `aud` of access tokens. */
  issuer: string
  keys: OAuthKeys
  /** SECRETS_ENCRYPTION_KEY, which client secrets are hashed under. */
  secretsKey: Buffer | undefined
  /** Seconds a replaced refresh token stays usable (OAUTH_REFRESH_GRACE_SECONDS). */
  refreshGraceSeconds: number
  /** The parent of an account, for its access tokens (`parentAccounts`). */
  parentAccountOf: (db: Database, accountId: string) => Promise<string | null>
  /** Told of the grants a request revoked, once committed, so that their access tokens are refused. */
  revokedGrants: Pick<RevokedGrants, 'announce'>
  /** Failed client authentications per address (client-auth.service.ts). */
  clientAuthFailures: FailureLimit
  /** The caller's address, for the audit record. */
  ip?: string
}

export const ACCESS_TOKEN_SECONDS = 3600
const REFRESH_TOKEN_DAYS = 90

/**
 * The parent of each account whose tokens were signed lately, for the `parent_account` claim. An account's
 * parent is set when it is created and never changes (the accounts service has no way to change it), so it
 * is read once rather than for every token: that read was a third of a token request's statements. Entries
 * still lapse after 5 minutes, and at most 10,000 are kept; unknown accounts are not kept.
 */
export function parentAccounts(): TokenDeps['parentAccountOf'] {
  const known = new LRUCache<string, { parent: string | null }, Database>({
    ...upToEntries(10_000),
    ttl: 5 * 60_000,
    fetchMethod: async (accountId, _stale, { context: db }) => {
      const account = await getAccount(db, accountId)
      return account ? { parent: account.parent_account } : undefined
    },
  })
  return async (db, accountId) => (await known.fetch(accountId, { context: db }))?.parent ?? null
}

type AccessTokenSigner = (claims: Record<string, unknown>) => string
const signers = new WeakMap<KeyObject, AccessTokenSigner>()

/**
 * Signs access tokens with the key, built once per key. fast-jwt signs synchronously with node:crypto, at
 * less than half the CPU of jose's WebCrypto signing (decisions.md, "/token throughput"); jose still
 * verifies them.
 */
function accessTokenSigner(deps: TokenDeps, signing: { key: KeyObject; kid: string }): AccessTokenSigner {
  let signer = signers.get(signing.key)
  if (!signer) {
    signer = createSigner({
      key: signing.key.export({ type: 'pkcs8', format: 'pem' }).toString(),
      algorithm: 'ES256',
      kid: signing.kid,
      header: { alg: 'ES256', typ: 'at+jwt' },
      iss: deps.issuer,
      aud: deps.issuer,
      expiresIn: ACCESS_TOKEN_SECONDS * 1000,
    })
    signers.set(signing.key, signer)
  }
  return signer
}

async function signAccessToken(
  deps: TokenDeps,
  db: Database,
  grant: { codeId: string; clientId: string; userId: string; accountId: string; scopes: string[] },
): Promise<string> {
  const signing = deps.keys.signing
  if (!signing) throw new OAuthError(503, 'temporarily_unavailable', 'OAUTH_SIGNING_KEY is not set')
  const parentAccount = await deps.parentAccountOf(db, grant.accountId)
  const sign = accessTokenSigner(deps, signing)
  return sign({
    type: 'access_token',
    uid: grant.userId,
    account_id: grant.accountId,
    parent_account: parentAccount,
    client_id: grant.clientId,
    scope: grant.scopes.join(' '),
    // The grant's id (its code's): API routes refuse the token once the grant is revoked (revoked-grants.ts).
    grant_id: grant.codeId,
    // RFC 9068 requires `sub`: resource servers using standard libraries refuse a token without it.
    sub: grant.userId,
    jti: randomUUID(),
  })
}

/** A new refresh token, and what is kept of it: its hash, for 90 days. */
function newRefreshToken() {
  const token = randomBytes(32).toString('base64url')
  return {
    token,
    tokenHash: keptHash(token),
    expiresAt: new Date(Date.now() + REFRESH_TOKEN_DAYS * 86_400_000),
  }
}

/** The answer: a new access token of the grant, with the refresh token stored for it. */
async function tokenResponse(
  deps: TokenDeps,
  db: Database,
  grant: { codeId: string; clientId: string; userId: string; accountId: string; scopes: string[] },
  refreshToken: string,
): Promise<TokenResponse> {
  return {
    access_token: await signAccessToken(deps, db, grant),
    token_type: 'Bearer',
    expires_in: ACCESS_TOKEN_SECONDS,
    refresh_token: refreshToken,
    scope: grant.scopes.join(' '),
  }
}

/** A new access token and refresh token of the grant (the code `codeId` started). */
async function issueTokens(
  deps: TokenDeps,
  tx: Database,
  grant: { codeId: string; clientId: string; userId: string; accountId: string; scopes: string[] },
): Promise<TokenResponse> {
  const { token, tokenHash, expiresAt } = newRefreshToken()
  await insertRefreshToken(tx, {
    tokenHash,
    codeId: grant.codeId,
    clientId: grant.clientId,
    userId: grant.userId,
    accountId: grant.accountId,
    scopes: grant.scopes,
    expiresAt,
  })
  return tokenResponse(deps, tx, grant, token)
}

/**
 * `POST /token`: the grant the request names (RFC 6749 4.1.3, 6), for a client still allowed tokens: as
 * /authorize refuses it (the spec's error), an app put back into development mode gets none.
 */
export function exchangeForTokens(deps: TokenDeps, client: AppRow, body: OAuthForm): Promise<TokenResponse> {
  if (!client.active) throw new OAuthError(400, 'unauthorized_client', APP_IN_DEV_MODE)
  const grantType = body.grant_type
  if (grantType === 'authorization_code') return exchangeCode(deps, client, body)
  if (grantType === 'refresh_token') return refreshTokens(deps, client, body)
  if (grantType === undefined || grantType === '') {
    throw new OAuthError(400, 'invalid_request', 'grant_type is required')
  }
  throw new OAuthError(
    400,
    'unsupported_grant_type',
    'Only authorization_code and refresh_token are supported',
  )
}

/** The authorization code grant (RFC 6749 4.1.3, RFC 7636 4.6). A replayed code revokes what it gave. */
async function exchangeCode(deps: TokenDeps, app: AppRow, body: OAuthForm): Promise<TokenResponse> {
  const code = param(body.code)
  const redirectUri = param(body.redirect_uri)
  if (!code) throw new OAuthError(400, 'invalid_request', 'code is required')
  if (!redirectUri) throw new OAuthError(400, 'invalid_request', 'redirect_uri is required')
  const verifier = param(body.code_verifier)
  if (verifier !== undefined && !isPkceValue(verifier))
    throw new OAuthError(400, 'invalid_request', 'code_verifier must be 43 to 128 unreserved characters')
  // The common case in one statement, without a transaction: a code this request may exchange. The access
  // token is signed after it commits (a failure to read the account then answers 500 with the code used).
  // Without a signing key, and for every refusal and replay, the transaction below decides as before.
  if (deps.keys.signing) {
    const refreshToken = newRefreshToken()
    const grant = await useCodeForGrant(
      deps.db,
      {
        codeHash: keptHash(code),
        clientId: app.id,
        redirectUri,
        codeChallenge: verifier === undefined ? null : s256(verifier),
      },
      refreshToken,
      deps.ip ?? null,
    )
    if (grant) return tokenResponse(deps, deps.db, grant, refreshToken.token)
  }
  const outcome = await inTransaction(deps.db, async (tx) => {
    const now = new Date()
    const row = await findCodeForUpdate(tx, keptHash(code), now)
    const unusable = 'The code is unknown, expired or already used'
    if (!row) return { refused: unusable }
    if (row.usedAt) {
      await revokeGrantOfCode(deps, tx, row.id, grantOf(row.id, row), 'code_replay')
      return { refused: unusable, revokedGrant: row.id }
    }
    // Used by this attempt, whatever follows: a refused code cannot be tried again.
    await markCodeUsed(tx, row.id, now)
    if (!row.usable || row.clientId !== app.id) return { refused: unusable }
    if (row.redirectUri !== redirectUri)
      return { refused: 'redirect_uri does not match the authorization request' }
    // A verifier for a code issued without a challenge is refused too: it would hide a PKCE downgrade.
    if ((row.codeChallenge ?? undefined) !== (verifier === undefined ? undefined : s256(verifier))) {
      return { refused: 'code_verifier does not match the code_challenge' }
    }
    const grant = grantOf(row.id, row)
    await audit(deps, tx, 'token.issued', grant)
    return { tokens: await issueTokens(deps, tx, grant) }
  })
  // Refusals commit (the code stays used, a replay's tokens stay revoked) before they are answered.
  if (outcome.revokedGrant) await deps.revokedGrants.announce([outcome.revokedGrant])
  if (outcome.refused !== undefined) throw invalidGrant(outcome.refused)
  return outcome.tokens as TokenResponse
}

export type Grant = ReturnType<typeof grantOf>

const audit = (deps: TokenDeps, tx: Database, event: AuditEventName, grant: Grant, detail = {}) =>
  recordAudit(tx, {
    event,
    clientId: grant.clientId,
    userId: grant.userId,
    accountId: grant.accountId,
    ip: deps.ip,
    detail: { scopes: grant.scopes, ...detail },
  })

/**
 * Revokes every token of the grant the code started, and records why. Once committed, the caller announces
 * it (`deps.revokedGrants`) so that the grant's access tokens are refused too.
 */
export async function revokeGrantOfCode(
  deps: TokenDeps,
  tx: Database,
  codeId: string,
  grant: Grant,
  reason: string,
) {
  const revoked = await revokeRefreshTokensOfCode(tx, codeId)
  await audit(deps, tx, 'grant.revoked', grant, { reason, refresh_tokens: revoked })
}

/** What tokens are issued for: the grant started by the code `codeId`, as the row carries it. */
export const grantOf = (
  codeId: string,
  row: { clientId: string; userId: string; accountId: string; scopes: string[] },
) => ({
  codeId,
  clientId: row.clientId,
  userId: row.userId,
  accountId: row.accountId,
  scopes: row.scopes,
})

/** Refresh tokens are judged now, with the grace period of replaced ones. */
export const refreshClock = (deps: TokenDeps) => ({
  now: new Date(),
  graceSeconds: deps.refreshGraceSeconds,
})

/**
 * The refresh grant (RFC 6749 6) with rotation: each use replaces the token. A replaced token stays usable
 * for the grace period, for a client that lost the answer (the token that answer held is then revoked);
 * used later, it is taken as stolen and the whole grant is revoked.
 */
async function refreshTokens(deps: TokenDeps, app: AppRow, body: OAuthForm): Promise<TokenResponse> {
  const token = param(body.refresh_token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required')
  // The common case in one statement, without a transaction: a live token of the client, not replaced yet.
  // The access token is signed after it commits (should that fail, the replaced token still serves for the
  // grace period). Replaced tokens, refusals, and a server without a signing key take the transaction below.
  if (deps.keys.signing) {
    const next = newRefreshToken()
    const grant = await replaceRefreshToken(
      deps.db,
      { tokenHash: keptHash(token), clientId: app.id },
      next,
      deps.ip ?? null,
    )
    if (grant) return tokenResponse(deps, deps.db, grant, next.token)
  }
  const outcome = await inTransaction(deps.db, async (tx) => {
    const row = await findRefreshTokenForUpdate(tx, keptHash(token), refreshClock(deps))
    if (!row || row.clientId !== app.id || !row.inForce) {
      return { refused: 'The refresh token is unknown, revoked or expired' }
    }
    const grant = grantOf(row.codeId, row)
    if (!row.withinGrace) {
      await revokeGrantOfCode(deps, tx, row.codeId, grant, 'refresh_token_reuse')
      return { refused: 'The refresh token was already used; the grant is revoked', revokedGrant: row.codeId }
    }
    await revokeRefreshTokensOfCode(tx, row.codeId, row.id)
    await markRefreshTokenReplaced(tx, row.id)
    await audit(deps, tx, 'token.refreshed', grant)
    return { tokens: await issueTokens(deps, tx, grant) }
  })
  if (outcome.revokedGrant) await deps.revokedGrants.announce([outcome.revokedGrant])
  if (outcome.refused !== undefined) throw invalidGrant(outcome.refused)
  return outcome.tokens as TokenResponse
}
