/**
 * WAL positions (LSNs) as PostgreSQL prints them, `16/B374D848`, made into fixed-width hex text
 * (`00000016B374D848`) whose order as text is their order in the log: compared as strings here, and in
 * Redis's Lua, which has no 64-bit integers.
 */
export type WalPosition = string

/** A position past every real one: "read from the primary" when the position of a write is not known. */
export const PAST_EVERY_POSITION: WalPosition = 'FFFFFFFFFFFFFFFF'

export function walPosition(lsn: string): WalPosition {
  const [high = '', low = ''] = lsn.split('/')
  return high.toUpperCase().padStart(8, '0') + low.toUpperCase().padStart(8, '0')
}

/** Whether a replica that replayed up to `replayed` holds everything written up to `written`. */
export function holds(replayed: WalPosition, written: WalPosition | undefined): boolean {
  return written === undefined || replayed >= written
}
