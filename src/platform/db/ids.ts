import { randomBytes } from 'node:crypto'

// ObjectId-like: 4 bytes of Unix seconds, 5 random bytes fixed per process, 3 bytes of counter.
// Time-ordered, unique across processes, 24 lowercase hex characters.
const processPart = randomBytes(5).toString('hex')
let counter = randomBytes(3).readUIntBE(0, 3)

export const ID_PATTERN = '^[0-9a-f]{24}$'

export function newId(): string {
  counter = (counter + 1) % 0x1000000
  const seconds = Math.floor(Date.now() / 1000)
  return seconds.toString(16).padStart(8, '0') + processPart + counter.toString(16).padStart(6, '0')
}

export function isId(value: unknown): value is string {
  return typeof value === 'string' && /^[0-9a-f]{24}$/.test(value)
}

/**
 * The lowest id made in `time`'s second: every id made before that second sorts below it, so `id < this`
 * is a time range that the primary key serves (the retention of append-only tables, docs/decisions.md).
 */
export function lowestIdAt(time: Date): string {
  return Math.floor(time.getTime() / 1000)
    .toString(16)
    .padStart(8, '0')
}
