import { hkdfSync, randomBytes } from 'node:crypto'
import { jwtVerify, SignJWT } from 'jose'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import { Unavailable } from '../../platform/http/errors.js'
import type { Locale } from './authorize.texts.js'

/** What /authorize was asked, once checked: carried from page to page in the signed `token`. */
export interface AuthorizationRequest {
  client_id: string
  redirect_uri: string
  scopes: string[]
  state?: string
  code_challenge?: string
  locale: Locale
}

/** The state of one sign-in: the request, the CSRF value its cookie must match, then who and where. */
export interface Flow extends AuthorizationRequest {
  csrf: string
  uid?: string
  account_id?: string
}

/** Long enough to type a password and read a consent page; a stale page starts again from the app. */
const FLOW_SECONDS = 15 * 60
export const CSRF_COOKIE = 'oauth_csrf'

/** A posted page that cannot go on; `reason` is for the log (never a token's or a cookie's value). */
export class FlowExpired extends Error {
  constructor(readonly reason: string) {
    super(reason)
  }
}

function flowKey(secretsKey: Buffer | undefined): Uint8Array {
  if (!secretsKey) throw new Unavailable('SECRETS_ENCRYPTION_KEY is not set: sign-in is unavailable')
  return new Uint8Array(hkdfSync('sha256', secretsKey, Buffer.alloc(0), 'oauth authorization flow', 32))
}

export const newCsrfValue = () => randomBytes(24).toString('base64url')

export function signFlow(secretsKey: Buffer | undefined, flow: Flow): Promise<string> {
  return new SignJWT({ flow })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuedAt()
    .setExpirationTime(`${FLOW_SECONDS}s`)
    .sign(flowKey(secretsKey))
}

/**
 * The flow of a posted page, when its token is genuine and fresh and the browser posting it holds the
 * flow's CSRF cookie: a page posted from another site cannot carry that cookie's value.
 */
export async function readFlow(
  secretsKey: Buffer | undefined,
  token: unknown,
  csrfCookie: string | undefined,
): Promise<Flow> {
  if (typeof token !== 'string') throw new FlowExpired('no flow token posted')
  // The browser sends the cookie only to the host that set it: a form posted to another host than the
  // page came from (localhost for 127.0.0.1) arrives without it.
  if (!csrfCookie) throw new FlowExpired('no CSRF cookie: cookies blocked, or posted to another host')
  let flow: Flow
  try {
    flow = (
      (await jwtVerify(token, flowKey(secretsKey), { algorithms: ['HS256'] })).payload as { flow: Flow }
    ).flow
  } catch {
    throw new FlowExpired('flow token invalid or expired')
  }
  if (!isSameSecret(csrfCookie, flow.csrf)) throw new FlowExpired('CSRF cookie does not match the flow')
  return flow
}
