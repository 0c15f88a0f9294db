import { randomBytes } from 'node:crypto'
import type { Database } from '../../platform/db/connection.js'
import { isId } from '../../platform/db/ids.js'
import { inTransaction } from '../../platform/db/transaction.js'
import { getAccount, getAccountStatus } from '../accounts/accounts.service.js'
import { type SignedInUser, verifyUserPassword } from '../accounts/sign-in.service.js'
import { type AppRow, findApp } from './apps.repository.js'
import { APP_IN_DEV_MODE } from './apps.service.js'
import { recordAudit } from './audit.service.js'
import { insertCode } from './authorize.repository.js'
import { type Locale, localeOf, scopeDescription } from './authorize.texts.js'
import type { AuthorizationRequest, Flow } from './flow.service.js'
import { findConsent, mergeConsent } from './grants.repository.js'
import { keptHash } from './kept-hash.js'
import { isPkceValue } from './pkce.js'
import { param, repeatedParams } from './request-params.js'
import { findScopes } from './scopes.repository.js'

/** RFC 6749 4.1.2.1 and RFC 7636: what /authorize may answer on the way to a code. */
export type AuthorizeOutcome =
  /** The app cannot be trusted with a redirect (unknown client, unregistered URI): a page says why. */
  | { kind: 'error-page'; error: string; description: string }
  | { kind: 'redirect'; location: string }
  | { kind: 'sign-in'; request: AuthorizationRequest; clientName: string }

/** The spec's authorization code lifetime: it expires 10 minutes after issue. */
export const AUTHORIZATION_CODE_LIFETIME_SECONDS = 10 * 60

/** What the authorization endpoint needs. */
export interface AuthorizeDeps {
  db: Database
  /** The server's issuer identifier (PUBLIC_BASE_URL), sent as `iss` with every redirect. */
  issuer: string
  /** OAUTH_REQUIRE_PKCE: a code_challenge of every client, confidential ones too (RFC 9700 2.1.1). */
  requirePkce: boolean
}

/** The account a flow would grant access to is suspended (or gone): no app may be allowed into it. */
export class AccountSuspended extends Error {
  constructor(readonly locale: Locale) {
    super('The account is suspended')
  }
}

/** The redirect URI with the parameters, and `iss` (RFC 9207) so the app can tell which server answered. */
function redirectTo(issuer: string, redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri)
  for (const [name, value] of Object.entries({ ...params, iss: issuer })) {
    if (value !== undefined) url.searchParams.set(name, value)
  }
  return url.toString()
}

/** Checks the request of `GET /authorize` in the order that keeps redirects to verified URIs only. */
export async function checkAuthorizationRequest(
  deps: AuthorizeDeps,
  query: Record<string, unknown>,
): Promise<AuthorizeOutcome> {
  // RFC 6749 3.1: parameters "MUST NOT be included more than once". Until the client and its redirect URI
  // are known a page says so; then the app is told (4.1.2.1: invalid_request).
  const repeated = repeatedParams(query)
  const repeatedTarget = repeated.find((name) => name === 'client_id' || name === 'redirect_uri')
  if (repeatedTarget) {
    return {
      kind: 'error-page',
      error: 'invalid_request',
      description: `${repeatedTarget} must not be repeated`,
    }
  }
  const clientId = param(query.client_id)
  const app = clientId && isId(clientId) ? await findApp(deps.db, clientId) : undefined
  if (!app) return { kind: 'error-page', error: 'unauthorized_client', description: 'Invalid Client ID' }
  const redirectUri = param(query.redirect_uri)
  if (!redirectUri || !app.redirectUris.includes(redirectUri)) {
    return {
      kind: 'error-page',
      error: 'invalid_request',
      description: 'redirect_uri is not registered for this app',
    }
  }
  const state = param(query.state)
  const refuse = (error: string, description: string): AuthorizeOutcome => ({
    kind: 'redirect',
    location: redirectTo(deps.issuer, redirectUri, { error, error_description: description, state }),
  })
  if (repeated[0]) return refuse('invalid_request', `${repeated[0]} must not be repeated`)
  if (!app.active) return refuse('unauthorized_client', APP_IN_DEV_MODE)
  const responseType = param(query.response_type)
  if (!responseType) return refuse('invalid_request', 'response_type is required')
  if (responseType !== 'code')
    return refuse('unsupported_response_type', 'Only response_type=code is supported')

  const challenge = param(query.code_challenge)
  const method = param(query.code_challenge_method)
  // Without a method RFC 7636 means `plain`, which RFC 9700 rules out.
  if ((challenge || method) && method !== 'S256')
    return refuse('invalid_request', 'code_challenge_method must be S256')
  if (challenge && !isPkceValue(challenge)) {
    return refuse('invalid_request', 'code_challenge must be 43 to 128 characters of base64url')
  }
  if (app.isPublic && !challenge)
    return refuse('invalid_request', 'This app must use PKCE (code_challenge with S256)')
  // RFC 7636 4.4.1: "the authorization server MUST return ... invalid_request" when it requires PKCE.
  if (deps.requirePkce && !challenge) return refuse('invalid_request', 'code_challenge is required')

  const requested = (param(query.scope) ?? '').split(' ').filter(Boolean)
  const scopes = requested.length > 0 ? app.scopes.filter((scope) => requested.includes(scope)) : app.scopes
  if (requested.length > 0 && scopes.length === 0) {
    return refuse('invalid_scope', 'None of the requested scopes is allowed for this app')
  }
  return {
    kind: 'sign-in',
    clientName: app.name,
    request: {
      client_id: app.id,
      redirect_uri: redirectUri,
      scopes,
      ...(state && { state }),
      ...(challenge && { code_challenge: challenge }),
      locale: localeOf(query.user_locale),
    },
  }
}

/** The app of a flow, while it may still be authorized (it may have been put back in development). */
export async function appOfFlow(db: Database, flow: Flow): Promise<AppRow | undefined> {
  const app = await findApp(db, flow.client_id)
  return app?.active && app.redirectUris.includes(flow.redirect_uri) ? app : undefined
}

export function signIn(db: Database, email: unknown, password: unknown): Promise<SignedInUser | null> {
  if (typeof email !== 'string' || typeof password !== 'string' || !email || !password)
    return Promise.resolve(null)
  return verifyUserPassword(db, email, password)
}

/** What the consent page shows: each granted scope's description, and the account's name. */
export async function consentDetails(db: Database, flow: Flow & { account_id: string }) {
  const [scopes, account] = await Promise.all([findScopes(db, flow.scopes), getAccount(db, flow.account_id)])
  return {
    accountName: account?.name ?? '',
    redirectUri: flow.redirect_uri,
    scopes: flow.scopes.map((scope) => ({
      scope,
      description: scopeDescription(
        flow.locale,
        scope,
        scopes.find((row) => row.scope === scope)?.description ?? scope,
      ),
    })),
  }
}

type ConsentedFlow = Flow & { uid: string; account_id: string }

/**
 * The user allowed the app: the consent is remembered (its scopes added to earlier ones) and a code
 * issued, together; the redirect that hands the code to the app.
 */
export function allow(deps: AuthorizeDeps, flow: ConsentedFlow, ip: string): Promise<string> {
  return inTransaction(deps.db, async (tx) => {
    await mergeConsent(tx, flow.account_id, {
      userId: flow.uid,
      clientId: flow.client_id,
      scopes: flow.scopes,
    })
    await recordAudit(tx, {
      event: 'consent.granted',
      clientId: flow.client_id,
      userId: flow.uid,
      accountId: flow.account_id,
      ip,
      detail: { scopes: flow.scopes },
    })
    return issueCode(tx, deps.issuer, flow)
  })
}

/** The user denied the app: the redirect that tells it so. */
export function deny(deps: AuthorizeDeps, flow: Flow): string {
  return refuseFlow(deps, flow, 'access_denied', 'The user denied access')
}

/** The redirect that tells the app of the flow why it gets no code (RFC 6749 4.1.2.1). */
export function refuseFlow(deps: AuthorizeDeps, flow: Flow, error: string, description: string): string {
  return redirectTo(deps.issuer, flow.redirect_uri, {
    error,
    error_description: description,
    state: flow.state,
  })
}

/** Throws AccountSuspended unless the flow's account is active: a suspended account lets no app in. */
export async function requireActiveAccount(db: Database, flow: Flow & { account_id: string }) {
  if ((await getAccountStatus(db, flow.account_id)) !== 'active') throw new AccountSuspended(flow.locale)
}

/** The accounts of a user that an app may be allowed into: the active ones. */
export async function activeAccounts<A extends { _id: string }>(db: Database, accounts: A[]): Promise<A[]> {
  const statuses = await Promise.all(accounts.map((account) => getAccountStatus(db, account._id)))
  return accounts.filter((_, i) => statuses[i] === 'active')
}

/** When the user allowed this app every asked scope in this account before: the code, without asking. */
export async function redirectIfConsented(deps: AuthorizeDeps, flow: ConsentedFlow) {
  const consent = await findConsent(deps.db, flow.account_id, flow.uid, flow.client_id)
  const covered = consent && flow.scopes.every((scope) => consent.scopes.includes(scope))
  return covered ? issueCode(deps.db, deps.issuer, flow) : undefined
}

/**
 * A single-use code for the consented flow, kept as its hash; the redirect that hands it to the app. Every
 * code passes here, so here the account is checked once more: it may have been suspended since its page.
 */
async function issueCode(db: Database, issuer: string, flow: ConsentedFlow) {
  await requireActiveAccount(db, flow)
  const code = randomBytes(32).toString('base64url')
  await insertCode(db, {
    codeHash: keptHash(code),
    clientId: flow.client_id,
    userId: flow.uid,
    accountId: flow.account_id,
    scopes: flow.scopes,
    redirectUri: flow.redirect_uri,
    codeChallenge: flow.code_challenge ?? null,
    expiresAt: new Date(Date.now() + AUTHORIZATION_CODE_LIFETIME_SECONDS * 1000),
  })
  return redirectTo(issuer, flow.redirect_uri, { code, state: flow.state })
}
