import { createHmac, hkdfSync, type KeyObject, randomBytes, randomUUID } from 'node:crypto'
import { createSigner } from 'fast-jwt'
import { LRUCache } from 'lru-cache'
import type { OAuthKeys } from '../../platform/auth/oauth-keys.js'
import type { RevokedGrants } from '../../platform/auth/revoked-grants.js'
import { upToEntries } from '../../platform/cache-bounds.js'
import type { Database } from '../../platform/db/connection.js'
import { inTransaction } from '../../platform/db/transaction.js'
import type { FailureLimit } from '../../platform/http/limits.js'
import { getAccount, getAccountStatus } from '../accounts/accounts.service.js'
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
  type JudgedRefreshToken,
  markCodeUsed,
  markRefreshTokenReplaced,
  replaceRefreshToken,
  revokeRefreshTokensOfCode,
  useCodeForGrant,
} from './token.repository.js'
import type { OAuthForm, TokenResponse } from './token.schemas.js'

/**
 * An RFC 6749 5.2 error: the token endpoint answers `{ error, error_description }` with this status (and
 * a 429, the seconds to wait in Retry-After).
 */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly retryAfterSeconds?: number,
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

function signingKeyOf(deps: TokenDeps): { key: KeyObject; kid: string } {
  const signing = deps.keys.signing
  if (!signing) throw new OAuthError(503, 'temporarily_unavailable', 'OAUTH_SIGNING_KEY is not set')
  return signing
}

async function signAccessToken(
  deps: TokenDeps,
  db: Database,
  grant: { codeId: string; clientId: string; userId: string; accountId: string; scopes: string[] },
): Promise<string> {
  const signing = signingKeyOf(deps)
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

/** A refresh token, and what is kept of it: its hash, for 90 days. */
const refreshTokenOf = (token: string) => ({
  token,
  tokenHash: keptHash(token),
  expiresAt: new Date(Date.now() + REFRESH_TOKEN_DAYS * 86_400_000),
})

/** The first refresh token of a grant: 256 random bits. */
const newRefreshToken = () => refreshTokenOf(randomBytes(32).toString('base64url'))

const successorKeys = new WeakMap<KeyObject, Buffer>()

/**
 * The refresh token that replaces `token`: its HMAC-SHA256 under a key derived from OAUTH_SIGNING_KEY
 * (which every token response needs). A client retrying a lost answer within the grace period is given the
 * same token again, without it being kept anywhere, and two refreshes racing cannot fork the grant
 * (RFC 9700 4.14.2). Unguessable without both the key and the replaced token.
 */
function successorOf(deps: TokenDeps, token: string) {
  const signing = signingKeyOf(deps)
  let key = successorKeys.get(signing.key)
  if (!key) {
    const secret = Buffer.from(signing.key.export({ format: 'jwk' }).d as string, 'base64url')
    key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), 'oauth refresh token successor', 32))
    successorKeys.set(signing.key, key)
  }
  return refreshTokenOf(createHmac('sha256', key).update(token).digest('base64url'))
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

/** Stores the grant's refresh token: its hash, bound to the grant (the code `codeId` started). */
async function storeRefreshToken(
  tx: Database,
  grant: Grant,
  { tokenHash, expiresAt }: { tokenHash: string; expiresAt: Date },
): Promise<void> {
  await insertRefreshToken(tx, {
    tokenHash,
    codeId: grant.codeId,
    clientId: grant.clientId,
    userId: grant.userId,
    accountId: grant.accountId,
    scopes: grant.scopes,
    expiresAt,
  })
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
    const ownUsable = row.usable && row.clientId === app.id
    // Nothing changes while the account is suspended: the code stays for a retry after its reactivation.
    if (ownUsable && !row.accountActive) return { refused: await accountRefusal(tx, row.accountId) }
    // Used by this attempt, whatever follows: a refused code cannot be tried again.
    await markCodeUsed(tx, row.accountId, row.id, now)
    if (!ownUsable) return { refused: unusable }
    if (row.redirectUri !== redirectUri)
      return { refused: 'redirect_uri does not match the authorization request' }
    // A verifier for a code issued without a challenge is refused too: it would hide a PKCE downgrade.
    if ((row.codeChallenge ?? undefined) !== (verifier === undefined ? undefined : s256(verifier))) {
      return { refused: 'code_verifier does not match the code_challenge' }
    }
    if (!row.member) return { refused: NO_LONGER_MEMBER }
    const grant = grantOf(row.id, row)
    await audit(deps, tx, 'token.issued', grant)
    const refreshToken = newRefreshToken()
    await storeRefreshToken(tx, grant, refreshToken)
    return { tokens: await tokenResponse(deps, tx, grant, refreshToken.token) }
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
 * The refusal of the apps of an account that may not act, in the API's words for its status: `Account is
 * suspended`, or `Account is removed` (also once the removal has deleted its row).
 */
const accountRefusal = async (db: Database, accountId: string) =>
  `Account is ${(await getAccountStatus(db, accountId)) ?? 'removed'}`

const NO_LONGER_MEMBER = 'The user is no longer a member of the account'

/**
 * RFC 6749 6: the scope a refresh asks for (space-separated; undefined when omitted or empty, which "is
 * treated as equal to the scope originally granted"), refused beyond the grant's: "The requested scope MUST
 * NOT include any scope not originally granted by the resource owner". The grant keeps its scope; the
 * access token gets the requested part, in the grant's order.
 */
function requestedScope(body: OAuthForm): string[] | undefined {
  const scopes = param(body.scope)?.split(' ').filter(Boolean)
  return scopes?.length ? scopes : undefined
}

const narrowedTo = (grant: Grant, requested: string[] | undefined): Grant =>
  requested ? { ...grant, scopes: grant.scopes.filter((scope) => requested.includes(scope)) } : grant

const exceedsGrant = (grant: Grant, requested: string[] | undefined) =>
  requested?.some((scope) => !grant.scopes.includes(scope)) ?? false

const invalidScope = () =>
  new OAuthError(400, 'invalid_scope', 'The requested scope exceeds the scope granted by the resource owner')

type RefreshOutcome = { tokens: TokenResponse } | { refused: OAuthError; revokedGrant?: string }

/**
 * The refresh grant (RFC 6749 6) with rotation (RFC 9700 4.14.2): each use replaces the token by its
 * successor (successorOf). A replaced token serves once more, within the grace period, as a retry of the
 * lost answer: the same successor, with a new access token. Presented otherwise (a second time, after the
 * grace period, or after its successor was used) it is taken as stolen and the whole grant is revoked.
 */
async function refreshTokens(deps: TokenDeps, app: AppRow, body: OAuthForm): Promise<TokenResponse> {
  const token = param(body.refresh_token)
  if (!token) throw new OAuthError(400, 'invalid_request', 'refresh_token is required')
  const requested = requestedScope(body)
  const successor = successorOf(deps, token)
  // The common case in one statement, without a transaction: a live token of the client, not replaced yet,
  // of a grant that may still act and holds the requested scope. The access token is signed after it
  // commits (should that fail, a retry within the grace period gets the same successor). Every other case
  // takes the transaction below, which tells why.
  const issued = await replaceRefreshToken(
    deps.db,
    { tokenHash: keptHash(token), clientId: app.id, requestedScope: requested?.join(' ') ?? '' },
    successor,
    deps.ip ?? null,
  )
  if (issued) return tokenResponse(deps, deps.db, narrowedTo(issued, requested), successor.token)
  const outcome = await inTransaction(deps.db, async (tx): Promise<RefreshOutcome> => {
    const clock = refreshClock(deps)
    const row = await findRefreshTokenForUpdate(tx, keptHash(token), clock)
    if (!row || row.clientId !== app.id || (!row.inForce && !row.replacedAt)) {
      return { refused: invalidGrant('The refresh token is unknown, revoked or expired') }
    }
    // Nothing changes while the account is suspended: its reactivation lets the same token refresh.
    if (!row.accountActive) return { refused: invalidGrant(await accountRefusal(tx, row.accountId)) }
    const grant = grantOf(row.codeId, row)
    const revokeGrant = async (reason: string, description: string) => {
      await revokeGrantOfCode(deps, tx, row.codeId, grant, reason)
      return { refused: invalidGrant(description), revokedGrant: row.codeId }
    }
    if (!row.member) {
      return revokeGrant('membership_ended', `${NO_LONGER_MEMBER}; the grant is revoked`)
    }
    let retried: JudgedRefreshToken | undefined
    if (row.replacedAt) {
      // Not revoked yet: neither retried already nor its successor replaced (which revokes it).
      const next =
        row.inForce && row.withinGrace && (await findRefreshTokenForUpdate(tx, successor.tokenHash, clock))
      if (!next || next.codeId !== row.codeId || !next.inForce || next.replacedAt) {
        return revokeGrant('refresh_token_reuse', 'The refresh token was already used; the grant is revoked')
      }
      retried = next
    }
    if (exceedsGrant(grant, requested)) return { refused: invalidScope() }
    // One live token per grant: a retry keeps the successor and uses up the replaced token.
    await revokeRefreshTokensOfCode(tx, row.codeId, retried?.id ?? row.id)
    await audit(deps, tx, 'token.refreshed', grant, retried ? { retry: true } : {})
    if (!retried) {
      await markRefreshTokenReplaced(tx, row.accountId, row.id)
      await storeRefreshToken(tx, grant, successor)
    }
    return { tokens: await tokenResponse(deps, tx, narrowedTo(grant, requested), successor.token) }
  })
  if ('tokens' in outcome) return outcome.tokens
  // Refusals commit (a revoked grant stays revoked) before they are answered.
  if (outcome.revokedGrant) await deps.revokedGrants.announce([outcome.revokedGrant])
  throw outcome.refused
}
