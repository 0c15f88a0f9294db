import { type DatabaseWait, databaseWaitOf } from '../db/waits.js'
import { isRedisUnavailable } from '../redis.js'

/** What a request could not get, for its 503 and its log line. */
export interface Unavailability {
  dependency: 'database' | 'redis'
  /** What the request waited for: a statement, a lock, a connection, or a database that is not there. */
  waitedFor: DatabaseWait | 'command'
  /** Retry-After: a held lock or a busy pool frees within a second or two; a database coming back takes longer. */
  retryAfterSeconds: number
}

const RETRY_AFTER_BUSY_SECONDS = 2
const RETRY_AFTER_DOWN_SECONDS = 5

/**
 * Whether `error` means a dependency could not serve the request in time or at all (503 with Retry-After: the
 * client may send it again), not that the request or the code is wrong (400 or 500).
 */
export function unavailabilityOf(error: unknown): Unavailability | undefined {
  const wait = databaseWaitOf(error)
  if (wait) {
    const retryAfterSeconds = wait === 'database' ? RETRY_AFTER_DOWN_SECONDS : RETRY_AFTER_BUSY_SECONDS
    return { dependency: 'database', waitedFor: wait, retryAfterSeconds }
  }
  if (isRedisUnavailable(error))
    return { dependency: 'redis', waitedFor: 'command', retryAfterSeconds: RETRY_AFTER_BUSY_SECONDS }
  return undefined
}
