import { createPrivateKey, generateKeyPairSync } from 'node:crypto'
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose'
import { describe, expect } from 'vitest'
import { buildTestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { ConfigError, loadConfig } from '../../config.js'
import { loadOAuthKeys } from '../../platform/auth/oauth-keys.js'

const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' })

test.override('appEnv', { PUBLIC_BASE_URL: 'https://platform.example.com' })

describe('OAuth signing keys and /.well-known/jwks.json', () => {
  test('publishes the public half of the generated key, which verifies what the private half signs', async ({
    t,
  }) => {
    const response = await t.app.inject({ url: '/.well-known/jwks.json' })
    expect(response.statusCode).toBe(200)
    expect(response.headers['cache-control']).toBe('public, max-age=300')
    const jwks = response.json()
    expect(jwks.keys).toEqual([
      {
        kty: 'EC',
        crv: 'P-256',
        x: expect.any(String),
        y: expect.any(String),
        kid: expect.stringMatching(/^[\w-]{43}$/),
        use: 'sig',
        alg: 'ES256',
      },
    ])
    const token = await new SignJWT({ scope: 'sites.read' })
      .setProtectedHeader({ alg: 'ES256', kid: jwks.keys[0].kid })
      .sign(createPrivateKey(t.config.oauth.signingKey as string))
    const { payload } = await jwtVerify(token, createLocalJWKSet(jwks))
    expect(payload.scope).toBe('sites.read')
  })

  test('keeps the generated key across restarts on the same DATA_DIR', ({ t }) => {
    const again = loadConfig({ NODE_ENV: 'test', DATA_DIR: t.config.dataDir })
    expect(again.oauth.signingKey).toBe(t.config.oauth.signingKey)
  })
})

describe('OAuth key configuration', () => {
  test('takes OAUTH_SIGNING_KEY as a JWK and publishes OAUTH_PREVIOUS_PUBLIC_KEYS after it', async () => {
    const current = p256().privateKey.export({ format: 'jwk' })
    const previous = p256().publicKey.export({ format: 'jwk' })
    const keys = await loadOAuthKeys({
      signingKey: JSON.stringify(current),
      previousPublicKeys: JSON.stringify([previous, current]),
    })
    expect(keys.jwks.keys.map((key) => key.x)).toEqual([current.x, previous.x])
    expect(keys.signing?.kid).toBe(keys.jwks.keys[0]?.kid)
    expect(JSON.stringify(keys.jwks)).not.toContain(current.d as string)
  })

  test('refuses a key that is not a P-256 private key, naming the variable', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({
      type: 'pkcs8',
      format: 'pem',
    }) as string
    const refusals: [Parameters<typeof loadOAuthKeys>[0], string][] = [
      [{ signingKey: rsa, previousPublicKeys: undefined }, 'OAUTH_SIGNING_KEY must be a P-256 (ES256) key'],
      [
        { signingKey: 'not a key', previousPublicKeys: undefined },
        'OAUTH_SIGNING_KEY must be a private key in PEM or JWK form',
      ],
      [
        { signingKey: undefined, previousPublicKeys: '{"kty":"EC"}' },
        'OAUTH_PREVIOUS_PUBLIC_KEYS must be a JSON array of public JWKs',
      ],
    ]
    for (const [config, message] of refusals) {
      await expect(loadOAuthKeys(config)).rejects.toThrow(new ConfigError(message))
    }
    await expect(buildTestApp({ OAUTH_SIGNING_KEY: rsa })).rejects.toBeInstanceOf(ConfigError)
  })
})

describe('authorization server metadata', () => {
  test('describes itself at /.well-known/oauth-authorization-server (RFC 8414)', async ({ t }) => {
    const response = await t.app.inject({ url: '/.well-known/oauth-authorization-server' })
    expect(response.json()).toMatchObject({
      issuer: 'https://platform.example.com',
      authorization_endpoint: 'https://platform.example.com/v1/auth/oauth/authorize',
      token_endpoint: 'https://platform.example.com/v1/auth/oauth/token',
      revocation_endpoint: 'https://platform.example.com/v1/auth/oauth/revoke',
      jwks_uri: 'https://platform.example.com/.well-known/jwks.json',
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      authorization_response_iss_parameter_supported: true,
    })
    expect(response.json().scopes_supported).toHaveLength(13)
  })
})
