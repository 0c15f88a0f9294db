import { createPrivateKey, createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto'
import { calculateJwkThumbprint } from 'jose'
import { type Config, ConfigError } from '../../config.js'

/** A published verification key. */
export interface PublicSigningJwk {
  kty: 'EC'
  crv: 'P-256'
  x: string
  y: string
  kid: string
  use: 'sig'
  alg: 'ES256'
}

/** The keys of OAuth access tokens (ES256): the one that signs, and every one that still verifies. */
export interface OAuthKeys {
  /** The current private key and its id; undefined in production without OAUTH_SIGNING_KEY. */
  signing: { key: KeyObject; kid: string } | undefined
  /** Published at /.well-known/jwks.json: the current public key first, then the previous ones. */
  jwks: { keys: PublicSigningJwk[] }
}

/** A key given as PEM, or as a JWK in JSON. */
const keyInput = (text: string) =>
  text.trim().startsWith('{') ? { key: JSON.parse(text) as JsonWebKey, format: 'jwk' as const } : text

function assertP256(key: KeyObject, variable: string): void {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new ConfigError(`${variable} must be a P-256 (ES256) key`)
  }
}

/** The public JWK as published: its RFC 7638 thumbprint is its `kid`, so a key always has the same id. */
async function publicJwk(key: KeyObject): Promise<PublicSigningJwk> {
  const { x, y } = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'jwk' })
  const jwk = { kty: 'EC' as const, crv: 'P-256' as const, x: x as string, y: y as string }
  return { ...jwk, kid: await calculateJwkThumbprint(jwk), use: 'sig', alg: 'ES256' }
}

/** Reads and checks the configured keys; a bad one stops the start with the variable's name. */
export async function loadOAuthKeys(
  config: Pick<Config['oauth'], 'signingKey' | 'previousPublicKeys'>,
): Promise<OAuthKeys> {
  let signing: OAuthKeys['signing']
  const keys: PublicSigningJwk[] = []
  if (config.signingKey) {
    let key: KeyObject
    try {
      key = createPrivateKey(keyInput(config.signingKey))
    } catch {
      throw new ConfigError('OAUTH_SIGNING_KEY must be a private key in PEM or JWK form')
    }
    assertP256(key, 'OAUTH_SIGNING_KEY')
    const jwk = await publicJwk(key)
    signing = { key, kid: jwk.kid }
    keys.push(jwk)
  }
  for (const previous of previousKeys(config.previousPublicKeys)) {
    assertP256(previous, 'OAUTH_PREVIOUS_PUBLIC_KEYS')
    const jwk = await publicJwk(previous)
    if (!keys.some((known) => known.kid === jwk.kid)) keys.push(jwk)
  }
  return { signing, jwks: { keys } }
}

function previousKeys(text: string | undefined): KeyObject[] {
  if (!text) return []
  try {
    const list = JSON.parse(text) as unknown
    if (!Array.isArray(list)) throw new Error('not an array')
    // Only the public members: a private part given by mistake is neither needed nor kept.
    return list.map(({ kty, crv, x, y }: JsonWebKey) =>
      createPublicKey({ key: { kty, crv, x, y }, format: 'jwk' }),
    )
  } catch {
    throw new ConfigError('OAUTH_PREVIOUS_PUBLIC_KEYS must be a JSON array of public JWKs')
  }
}
