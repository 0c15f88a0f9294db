import { isId } from '../../platform/db/ids.js'
import { findAppForClientAuth } from './app-cache.js'
import type { AppRow } from './apps.repository.js'
import { clientSecretMatches } from './apps.service.js'
import { recordAudit } from './audit.service.js'
import { param } from './request-params.js'
import type { OAuthForm } from './token.schemas.js'
import { OAuthError, type TokenDeps } from './token.service.js'

/** `Basic base64(client_id:client_secret)`, each form-urlencoded first (RFC 6749 2.3.1). */
function basicCredentials(header: string): { id: string; secret: string } | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header.trim())
  const decoded = match ? Buffer.from(match[1] as string, 'base64').toString('utf8') : ''
  const colon = decoded.indexOf(':')
  if (colon < 0) return undefined
  try {
    const formDecode = (part: string) => decodeURIComponent(part.replace(/\+/g, ' '))
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

/** Failed client authentications an address may make in 15 minutes. */
export const CLIENT_AUTH_FAILURES = 30

/**
 * The client, authenticated by HTTP Basic or by `client_id` and `client_secret` in the body (one method
 * only). A public app authenticates with its id alone (in the body): PKCE then proves it started the
 * authorization.
 */
export async function authenticateClient(
  deps: TokenDeps,
  request: { authorization?: string; body: OAuthForm },
): Promise<AppRow> {
  const basic = request.authorization?.trim().toLowerCase().startsWith('basic ')
  const failed = async (clientId?: string) => {
    const ip = deps.ip ?? ''
    // Past the limit an address is answered 429 and no longer recorded: a flood of bad credentials
    // neither grows the audit table nor goes on guessing. Good credentials from it still pass.
    const secondsBlocked = await deps.clientAuthFailures.secondsBlocked(ip)
    if (secondsBlocked > 0) {
      return new OAuthError(
        429,
        'too_many_requests',
        'Too many failed client authentications; try later',
        secondsBlocked,
      )
    }
    await deps.clientAuthFailures.failed(ip)
    await recordAudit(deps.db, {
      event: 'client.authentication_failed',
      clientId: clientId && isId(clientId) ? clientId : null,
      ip: deps.ip,
      detail: { method: basic ? 'client_secret_basic' : 'client_secret_post' },
    })
    return new OAuthError(401, 'invalid_client', 'Client authentication failed')
  }
  const bodySecret = param(request.body.client_secret)
  if (basic && bodySecret) {
    throw new OAuthError(400, 'invalid_request', 'Use one client authentication method, not two')
  }
  const bodyClientId = param(request.body.client_id)
  const credentials = basic
    ? basicCredentials(request.authorization as string)
    : { id: bodyClientId ?? '', secret: bodySecret }
  if (!credentials?.id || !isId(credentials.id)) throw await failed(credentials?.id)
  if (basic && bodyClientId !== undefined && bodyClientId !== credentials.id)
    throw new OAuthError(
      400,
      'invalid_request',
      'client_id in the body is not the client of the Basic credentials',
    )
  const app = await findAppForClientAuth(deps.db, credentials.id)
  if (!app) throw await failed(credentials.id)
  // A public client has no secret (RFC 6749 2.1: it cannot keep one): a secret sent for it is refused.
  const authenticated = app.isPublic
    ? credentials.secret === undefined
    : credentials.secret !== undefined && clientSecretMatches(deps.secretsKey, app, credentials.secret)
  if (!authenticated) throw await failed(app.id)
  return app
}
