import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { upToEntries } from '../cache-bounds.js'
import type { Logger } from '../log/logger.js'
import { REPLICA_CHECK_INTERVAL_MS } from './replicas.js'
import { PAST_EVERY_POSITION, type WalPosition } from './wal-positions.js'

/**
 * The WAL position of each session's last write (a session: an account, or the operator), shared by every
 * instance through Redis, so that a read on any instance goes to a replica that holds it (read your writes).
 * Every session reads the operator's writes as well: suspending an account or removing a member (through
 * the admin API) binds every account's reads, the Socket.IO handshake's lookups among them, at once.
 * Kept in this instance too: without Redis, one instance still reads its own writes, and a Redis outage costs
 * reads on the primary, never stale ones.
 */
export interface WritePositions {
  /** Records a committed write's position: the session's position only ever rises. */
  raise(session: string, position: WalPosition): Promise<void>
  /**
   * What a read of the session must see: its last write's position or the operator's, whichever is later;
   * undefined when neither wrote lately; past every position when Redis does not answer.
   */
  of(session: string): Promise<WalPosition | undefined>
}

/** The session of the admin API's requests. */
export const OPERATOR_SESSION = 'operator'

const KEY_PREFIX = 'replica-reads:written:'

/** Sets the key to the higher of its position and ARGV[1] (positions are fixed-width hex text) for ARGV[2] ms. */
const RAISE_SCRIPT = `
local kept = redis.call('GET', KEYS[1])
if not kept or kept < ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end`

/**
 * How long past DATABASE_REPLICA_MAX_LAG_MS a position is kept: a replica in rotation was within that lag
 * at its last check, at most REPLICA_CHECK_INTERVAL_MS ago, so by then it has replayed the position.
 */
const KEPT_PAST_MAX_LAG_MS = 4 * REPLICA_CHECK_INTERVAL_MS

/**
 * A position is kept as long as it matters, then forgotten: one key per session that wrote lately, never more.
 */
export function createWritePositions(options: {
  redis: Redis | undefined
  maxLagMs: number
  log: Logger
}): WritePositions {
  const { redis, log } = options
  const keepMs = options.maxLagMs + KEPT_PAST_MAX_LAG_MS
  const local = new LRUCache<string, WalPosition>({ ...upToEntries(100_000), ttl: keepMs })
  const raiseLocally = (session: string, position: WalPosition) => {
    const kept = local.get(session)
    if (kept === undefined || kept < position) local.set(session, position)
  }
  return {
    async raise(session, position) {
      raiseLocally(session, position)
      if (!redis) return
      try {
        await redis.eval(RAISE_SCRIPT, 1, KEY_PREFIX + session, position, keepMs)
      } catch (error) {
        // The other instances cannot know of this write: this one reads it from the primary meanwhile, and
        // theirs are stale by at most DATABASE_REPLICA_MAX_LAG_MS, as for any other client's write.
        log.warn({ err: error, session }, 'could not share the position of a write')
      }
    },
    async of(session) {
      const kept: (WalPosition | null | undefined)[] = [local.get(session), local.get(OPERATOR_SESSION)]
      if (redis) {
        try {
          kept.push(...(await redis.mget(KEY_PREFIX + session, KEY_PREFIX + OPERATOR_SESSION)))
        } catch {
          return PAST_EVERY_POSITION
        }
      }
      return latest(kept)
    },
  }
}

function latest(positions: (WalPosition | null | undefined)[]): WalPosition | undefined {
  let found: WalPosition | undefined
  for (const position of positions)
    if (position && (found === undefined || position > found)) found = position
  return found
}
