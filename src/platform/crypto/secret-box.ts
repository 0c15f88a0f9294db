import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto'

const VERSION = 'v1'

/**
 * Encrypts a credential for storage (AES-256-GCM, random 96-bit nonce) as
 * `v1.<nonce>.<tag>.<ciphertext>` in base64url, so a database dump alone does not reveal it.
 */
export function sealSecret(key: Buffer, plaintext: string): string {
  const nonce = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, nonce)
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return [VERSION, nonce, cipher.getAuthTag(), ciphertext]
    .map((part) => (typeof part === 'string' ? part : part.toString('base64url')))
    .join('.')
}

/** The plaintext of `sealSecret`; throws when the key is wrong or the value was altered. */
export function openSecret(key: Buffer, sealed: string): string {
  const [version, nonce, tag, ciphertext] = sealed.split('.')
  if (version !== VERSION || !nonce || !tag || ciphertext === undefined)
    throw new Error('not a sealed secret')
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(nonce, 'base64url'))
  decipher.setAuthTag(Buffer.from(tag, 'base64url'))
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString(
    'utf8',
  )
}
