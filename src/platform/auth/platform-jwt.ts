import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto'
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'
import type { Config } from '../../config.js'
import { isId } from '../db/ids.js'
import { Unauthorized } from '../http/errors.js'

/** Who is calling: the claims of a platform JWT, or of an OAuth access token (`oauth`). */
export interface AuthContext {
  uid: string
  account_id: string
  parent_account: string | null
  conversation?: { id: string }
  /**
   * When a platform JWT was issued (its `iat`, seconds since the epoch), when it says: a user's sessions can
   * be ended from a moment on (account-access.ts).
   */
  iat?: number
  /** Set when a third-party app calls with an OAuth access token: the app and the scopes granted it. */
  oauth?: { client_id: string; scopes: string[] }
}

export interface PlatformTokens {
  verify(token: string): Promise<AuthContext>
  /**
   * When a token verified before stops being accepted (its `exp` and the clock skew, ms since the epoch;
   * Infinity for a token without `exp`); undefined for a token not remembered.
   */
  acceptedUntil(token: string): number | undefined
  /** The caller of a token verified before and not yet expired, without a promise; else undefined. */
  remembered(token: string): AuthContext | undefined
  sign(context: AuthContext, ttlSeconds: number): Promise<string>
  /** A short-lived token this service presents to other platform services for an account. */
  signService(accountId: string): Promise<string>
}

export const CLOCK_SKEW_SECONDS = 300
const CACHE_LIMIT = 10_000

interface Keys {
  algorithms: string[]
  verifyKey: KeyObject | Uint8Array
  signKey: KeyObject | Uint8Array | undefined
  signAlg: string
}

function keysFrom(jwt: Config['jwt']): Keys {
  if (jwt.publicKey) {
    const verifyKey = createPublicKey(jwt.publicKey)
    const alg = verifyKey.asymmetricKeyType === 'ec' ? 'ES256' : 'RS256'
    const signKey = jwt.privateKey ? createPrivateKey(jwt.privateKey) : undefined
    return { algorithms: [alg], verifyKey, signKey, signAlg: alg }
  }
  if (!jwt.secret) throw new Error('JWT_SECRET or JWT_PUBLIC_KEY is required')
  const secret = new TextEncoder().encode(jwt.secret)
  return { algorithms: ['HS256'], verifyKey: secret, signKey: secret, signAlg: 'HS256' }
}

function signWith(keys: Keys, claims: Record<string, unknown>, ttlSeconds: number): Promise<string> {
  if (!keys.signKey) throw new Error('JWT_PRIVATE_KEY is required to mint tokens when JWT_PUBLIC_KEY is set')
  return new SignJWT(claims)
    .setProtectedHeader({ alg: keys.signAlg, typ: 'JWT' })
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(keys.signKey)
}

function contextFrom(payload: Record<string, unknown>): AuthContext {
  const { uid, account_id, parent_account, conversation, iat } = payload
  if (!isId(uid) || !isId(account_id)) throw new Unauthorized('token lacks uid or account_id')
  const context: AuthContext = {
    uid,
    account_id,
    parent_account: isId(parent_account) ? parent_account : null,
  }
  if (typeof iat === 'number') context.iat = iat
  const conversationId = (conversation as { id?: unknown } | undefined)?.id
  if (isId(conversationId)) context.conversation = { id: conversationId }
  return context
}

/**
 * Where a remembered token is filed: its signature, the last segment. Hashing those few dozen characters
 * instead of the whole token is a measurable part of the light GET; the whole token is still compared.
 */
const signatureOf = (token: string) => token.slice(token.lastIndexOf('.') + 1)

/**
 * Verifies platform JWTs (HS256 secret, or RS256/ES256 public key) with 5 minutes of clock skew.
 * Verified tokens are remembered until they expire, so a client's repeated calls skip the crypto.
 */
export function createPlatformTokens(jwt: Config['jwt']): PlatformTokens {
  const keys = keysFrom(jwt)
  const verified = new Map<string, { token: string; context: AuthContext; expiresAt: number }>()

  async function verifyUncached(token: string) {
    try {
      const { payload } = await jwtVerify(token, keys.verifyKey, {
        algorithms: keys.algorithms,
        clockTolerance: CLOCK_SKEW_SECONDS,
      })
      const expiresAt = typeof payload.exp === 'number' ? (payload.exp + CLOCK_SKEW_SECONDS) * 1000 : Infinity
      return { context: contextFrom(payload), expiresAt }
    } catch (error) {
      if (error instanceof Unauthorized) throw error
      if (error instanceof joseErrors.JWTExpired) throw new Unauthorized('token expired')
      throw new Unauthorized('invalid token')
    }
  }

  function remembered(token: string): AuthContext | undefined {
    const signature = signatureOf(token)
    const hit = verified.get(signature)
    if (hit === undefined || hit.token !== token) return undefined
    if (hit.expiresAt > Date.now()) return hit.context
    verified.delete(signature)
    return undefined
  }

  return {
    remembered,
    acceptedUntil(token) {
      const hit = verified.get(signatureOf(token))
      return hit?.token === token ? hit.expiresAt : undefined
    },
    async verify(token) {
      const known = remembered(token)
      if (known) return known
      const entry = await verifyUncached(token)
      if (verified.size >= CACHE_LIMIT) verified.delete(verified.keys().next().value as string)
      verified.set(signatureOf(token), { token, ...entry })
      return entry.context
    },
    sign: (context, ttlSeconds) => signWith(keys, { ...context }, ttlSeconds),
    signService: (accountId) =>
      signWith(keys, { type: 'service', sub: 'platform-backend', account_id: accountId }, 300),
  }
}
