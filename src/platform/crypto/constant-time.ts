import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (value: string | Buffer) => createHash('sha256').update(value).digest()

/**
 * Whether a secret, token or signature a caller sent equals the expected one, compared in constant time.
 * Both are compared as SHA-256 digests, so neither their contents nor a difference in length shows in the
 * time taken (`timingSafeEqual` alone throws on unequal lengths, and an early length check tells the length).
 * `undefined` (a header or field not sent) never matches.
 */
export function isSameSecret(given: string | Buffer | undefined, expected: string | Buffer): boolean {
  if (given === undefined) return false
  return timingSafeEqual(digest(given), digest(expected))
}
