import { type Static, Type } from '@sinclair/typebox'
import { StringEnum } from '../../platform/http/schemas.js'
import { PKCE_VALUE_PATTERN } from './pkce.js'

/**
 * A form of /token, /introspect or /revoke as parsed (form-urlencoded or JSON), not checked against the
 * schemas below: the services read each parameter themselves to answer RFC 6749 errors
 * (`invalid_request`, `unsupported_grant_type`, …) instead of the API's error envelope.
 */
export type OAuthForm = Record<string, unknown>

const Param = (description: string, options: { pattern?: string } = {}) =>
  Type.Optional(Type.String({ description, ...options }))

const ClientAuthentication = Type.Object({
  client_id: Param('The client, when it authenticates in the body (or is public) rather than by HTTP Basic'),
  client_secret: Param(
    'The client secret, when it authenticates in the body rather than by HTTP Basic; never for a public client',
  ),
})

export const TokenRequestBody = Type.Composite(
  [
    Type.Object({
      grant_type: StringEnum(['authorization_code', 'refresh_token'] as const),
      code: Param('authorization_code: the code of the redirect'),
      redirect_uri: Param('authorization_code: the redirect_uri of the authorization request'),
      code_verifier: Param('authorization_code: the PKCE verifier, when the request had a code_challenge', {
        pattern: PKCE_VALUE_PATTERN,
      }),
      refresh_token: Param('refresh_token: the refresh token to exchange (it is replaced)'),
      scope: Param(
        'refresh_token: the scopes the access token should carry, space-separated, within those granted (RFC 6749 6); all of them when omitted',
      ),
    }),
    ClientAuthentication,
  ],
  { title: 'TokenRequest' },
)

export const TokenStatusRequestBody = Type.Composite(
  [
    Type.Object({
      token: Type.String({ description: 'An access token or a refresh token of the calling client' }),
      token_type_hint: Param('access_token or refresh_token; the server tells them apart itself'),
    }),
    ClientAuthentication,
  ],
  { title: 'TokenStatusRequest' },
)

export const TokenResponse = Type.Object(
  {
    access_token: Type.String({ description: 'A JWT (RFC 9068), valid for an hour' }),
    token_type: Type.Literal('Bearer'),
    expires_in: Type.Integer(),
    refresh_token: Type.String({ description: 'Replaced by each refresh; valid for 90 days' }),
    scope: Type.String({ description: 'The granted scopes, space-separated' }),
  },
  { title: 'TokenResponse' },
)
export type TokenResponse = Static<typeof TokenResponse>

export const Introspection = Type.Object(
  {
    active: Type.Boolean(),
    token_type: Type.Optional(StringEnum(['Bearer', 'refresh_token'] as const)),
    scope: Type.Optional(Type.String()),
    client_id: Type.Optional(Type.String()),
    sub: Type.Optional(Type.String({ description: 'The user' })),
    account_id: Type.Optional(Type.String()),
    parent_account: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    exp: Type.Optional(Type.Integer()),
    iat: Type.Optional(Type.Integer()),
    iss: Type.Optional(Type.String()),
    aud: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String())])),
    jti: Type.Optional(Type.String()),
  },
  { title: 'TokenIntrospection' },
)
export type Introspection = Static<typeof Introspection>

/** RFC 6749 5.2: how /token, /introspect and /revoke answer errors. */
export const OAuthErrorBody = Type.Object(
  {
    error: Type.String({ description: 'invalid_request, invalid_client, invalid_grant, …' }),
    error_description: Type.String(),
  },
  { title: 'OAuthError' },
)

/** The error answers of an endpoint of the authorization server, in the RFC 6749 form. */
export function oauthErrorResponses<S extends number>(...statuses: S[]): Record<S, typeof OAuthErrorBody> {
  return Object.fromEntries(statuses.map((status) => [status, OAuthErrorBody])) as Record<
    S,
    typeof OAuthErrorBody
  >
}

/* Examples of the API reference (test/openapi-reference.test.ts checks each against its schema). */

export const TOKEN_REQUEST_EXAMPLE = {
  grant_type: 'authorization_code',
  code: 'SplxlOBeZQQYbYS6WxSbIA',
  redirect_uri: 'https://calendar-sync.example.com/oauth/callback',
  code_verifier: 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
  client_id: '65f1c0ffee0000000000a101',
} satisfies Static<typeof TokenRequestBody>

export const TOKEN_RESPONSE_EXAMPLE = {
  access_token: 'eyJhbGciOiJFUzI1NiIsImtpZCI6IjEifQ.eyJ0eXBlIjoiYWNjZXNzX3Rva2VuIn0.c2lnbmF0dXJl',
  token_type: 'Bearer',
  expires_in: 3600,
  refresh_token: 'rt_8b1f4d2e9c7a3f6b0d5e1a8c4f2b9d7e',
  scope: 'crm.contacts.read',
} satisfies TokenResponse
