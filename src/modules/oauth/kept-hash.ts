import { createHash } from 'node:crypto'

/**
 * What is kept of authorization codes and refresh tokens: their SHA-256 in hex. They are random and long,
 * so a fast hash is enough (ARCHITECTURE.md, passwords).
 */
export const keptHash = (value: string): string => createHash('sha256').update(value).digest('hex')
