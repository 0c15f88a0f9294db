import type { Database } from '../../platform/db/connection.js'
import { LOCALES } from './authorize.texts.js'
import type { ServerMetadata } from './metadata.schemas.js'
import { listScopes } from './scopes.service.js'

const CLIENT_AUTH_METHODS = ['client_secret_basic', 'client_secret_post', 'none']

/** What RFC 8414 has a server say of itself; `issuer` is the `iss` of its tokens and redirects. */
export async function serverMetadata(db: Database, issuer: string): Promise<ServerMetadata> {
  const scopes = await listScopes(db)
  return {
    issuer,
    authorization_endpoint: `${issuer}/v1/auth/oauth/authorize`,
    token_endpoint: `${issuer}/v1/auth/oauth/token`,
    revocation_endpoint: `${issuer}/v1/auth/oauth/revoke`,
    introspection_endpoint: `${issuer}/v1/auth/oauth/introspect`,
    jwks_uri: `${issuer}/.well-known/jwks.json`,
    scopes_supported: scopes.map((s) => s.scope),
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    token_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    revocation_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    introspection_endpoint_auth_methods_supported: CLIENT_AUTH_METHODS,
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    ui_locales_supported: [...LOCALES],
  }
}
