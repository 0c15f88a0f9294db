import { createHmac } from 'node:crypto'
import { isSameSecret } from '../../platform/crypto/constant-time.js'
import type { Database } from '../../platform/db/connection.js'
import { Invalid } from '../../platform/http/errors.js'
import { isAccountServing } from '../accounts/accounts.service.js'
import { addToDoNotDisturb } from './do-not-disturb.service.js'

export const ONE_CLICK_REASON = 'Unsubscribed with the one-click link in the email (RFC 8058)'

/** What one-click unsubscribe links are made with. */
export interface UnsubscribeDeps {
  /** The key that signs the links (`unsubscribeLinkKey`); none: mail goes without a link. */
  linkKey: Buffer | undefined
  /** Where the links point (PUBLIC_BASE_URL). */
  publicBaseUrl: string
}

/** The key of unsubscribe links: the stored-credentials key, else the JWT secret; none in public-key-only set-ups. */
export function unsubscribeLinkKey(secretsKey: Buffer | undefined, jwtSecret: string | undefined) {
  return secretsKey ?? (jwtSecret ? Buffer.from(jwtSecret) : undefined)
}

const mac = (key: Buffer, payload: string) =>
  createHmac('sha256', key).update(`unsubscribe\n${payload}`).digest()

/** `<payload>.<mac>`: the account and address, signed, so a link cannot be made for another address. */
export function unsubscribeToken(key: Buffer | undefined, accountId: string, email: string) {
  if (!key) return undefined
  const payload = Buffer.from(JSON.stringify({ a: accountId, e: email })).toString('base64url')
  return `${payload}.${mac(key, payload).toString('base64url')}`
}

function readToken(key: Buffer | undefined, token: string): { accountId: string; email: string } {
  const [payload = '', signature = ''] = token.split('.')
  if (!key || !isSameSecret(Buffer.from(signature, 'base64url'), mac(key, payload))) {
    throw new Invalid('Invalid unsubscribe link')
  }
  const { a, e } = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { a: string; e: string }
  return { accountId: a, email: e }
}

/**
 * The RFC 8058 headers for a message to one recipient: mail clients show an unsubscribe button that
 * POSTs to our link. With several recipients in one message a link could not say who clicked.
 */
export function oneClickHeaders(
  deps: UnsubscribeDeps,
  accountId: string,
  recipients: { email: string }[],
): Record<string, string> {
  const [only] = recipients
  const token =
    recipients.length === 1 && only ? unsubscribeToken(deps.linkKey, accountId, only.email) : undefined
  if (!token) return {}
  return {
    'List-Unsubscribe': `<${deps.publicBaseUrl}/v1/e/mailprovider/unsubscribe?token=${token}>`,
    'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
  }
}

/**
 * The one-click unsubscribe: the address goes on the account's do-not-disturb list, permanently. A link of
 * a removed account (or of one no longer held) writes nothing: the account sends no more mail, and a row
 * written under it once its removal is done would keep the address with nothing left to delete it.
 */
export async function unsubscribeWithLink(db: Database, linkKey: Buffer | undefined, token: string) {
  const { accountId, email } = readToken(linkKey, token)
  if (!(await isAccountServing(db, accountId, 'visit'))) return
  await addToDoNotDisturb(db, accountId, { value: email, type: 'permanent', reason: ONE_CLICK_REASON })
}
