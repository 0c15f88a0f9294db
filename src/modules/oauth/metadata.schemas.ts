import { type Static, Type } from '@sinclair/typebox'

export const Jwks = Type.Object(
  {
    keys: Type.Array(
      Type.Object(
        {
          kty: Type.Literal('EC'),
          crv: Type.Literal('P-256'),
          x: Type.String(),
          y: Type.String(),
          kid: Type.String({ description: 'RFC 7638 thumbprint' }),
          use: Type.Literal('sig'),
          alg: Type.Literal('ES256'),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { title: 'Jwks' },
)

const Strings = Type.Array(Type.String())

/** RFC 8414 2: what the server says of itself. */
export const ServerMetadata = Type.Object(
  {
    issuer: Type.String({ description: 'The `iss` of its tokens and redirects' }),
    authorization_endpoint: Type.String(),
    token_endpoint: Type.String(),
    revocation_endpoint: Type.String(),
    introspection_endpoint: Type.String(),
    jwks_uri: Type.String(),
    scopes_supported: Strings,
    response_types_supported: Strings,
    grant_types_supported: Strings,
    token_endpoint_auth_methods_supported: Strings,
    revocation_endpoint_auth_methods_supported: Strings,
    introspection_endpoint_auth_methods_supported: Strings,
    code_challenge_methods_supported: Strings,
    authorization_response_iss_parameter_supported: Type.Boolean(),
    ui_locales_supported: Strings,
  },
  { title: 'AuthorizationServerMetadata' },
)
export type ServerMetadata = Static<typeof ServerMetadata>
