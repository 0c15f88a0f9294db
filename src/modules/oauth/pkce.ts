import { createHash } from 'node:crypto'

/**
 * RFC 7636 4.1, 4.2: a code verifier, and an S256 code challenge (a verifier's hash in base64url), are 43
 * to 128 characters of [A-Z] / [a-z] / [0-9] / "-" / "." / "_" / "~".
 */
export const PKCE_VALUE_PATTERN = '^[A-Za-z0-9._~-]{43,128}$'
const pkceValue = new RegExp(PKCE_VALUE_PATTERN)

export const isPkceValue = (value: string): boolean => pkceValue.test(value)

/** RFC 7636 4.2: the S256 code challenge of a verifier. */
export const s256 = (verifier: string): string => createHash('sha256').update(verifier).digest('base64url')
