import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import { upToEntries } from '../cache-bounds.js'
import { type DomainError, Forbidden, Unauthorized } from '../http/errors.js'
import type { Logger } from '../log/logger.js'
import { closeRedis, duplicateRedis } from '../redis.js'
import type { AuthContext } from './platform-jwt.js'

/** Where an instance that changed an account's access tells the others: `<account>` or `<account> <user>`. */
const CHANNEL = 'accounts:access-changed'

/** What the database says of a caller's account and of the caller in it. */
export interface AccountStanding {
  /** The account's status; null when this service holds no such account. */
  status: string | null
  /**
   * False when the user is one this service holds and is not a member of the account: removed, or never
   * added. A user it does not hold (a token another platform service minted) counts as a member.
   */
  member: boolean
  /** The account's own request budget (account-budget.ts); null: the service's default. */
  requestBudget: number | null
  /**
   * The user's sessions start after this second (since the epoch): a platform JWT issued in it or before, or
   * saying not when, is refused. Null: every token of the user stands (no reset of their sessions).
   */
  sessionsValidAfter: number | null
}

/** Whether a caller is let in, and the budget its requests count against. */
export interface Admission {
  /** Why the caller is refused (suspended account, former member); undefined: let in. */
  refusal: DomainError | undefined
  /** The account's own request budget; null: the service's default (ACCOUNT_REQUEST_BUDGET). */
  requestBudget: number | null
}

export interface AccountAccessOptions {
  lookUp: (accountId: string, userId: string) => Promise<AccountStanding>
  redis: Redis | undefined
  /** How long a verdict is kept on an instance that hears no news of a change (OAUTH_REVOCATION_CACHE_MS). */
  liveForMs: number
  logger: Logger
}

/**
 * Whether a caller's token still opens its account: refused once the account is suspended, once the user
 * is no longer a member, or once the user's sessions were ended after the token was issued, whatever the
 * token's own lifetime. Asked on every authenticated call, so verdicts
 * are kept per instance: an instance that changes an account forgets its verdicts at once and, with Redis,
 * tells the others at once; without Redis (or should the news be lost) they ask again within `liveForMs`,
 * the same bound as a revoked grant. The verdict carries the account's own request budget too
 * (platform/http/account-budget.ts), so that counting a request against it costs no query either.
 */
export interface AccountAccess {
  /** The refusal for this caller (undefined: allowed), synchronously when known here, else a promise. */
  refusalFor(auth: AuthContext): DomainError | undefined | Promise<DomainError | undefined>
  /** The refusal and the account's request budget, from the same verdict, kept alike. */
  admission(auth: AuthContext): Admission | Promise<Admission>
  /** After a change to the account (or to one member) committed: forgets its verdicts everywhere. */
  changed(accountId: string, userId?: string): Promise<void>
  /** Calls `listener` on this instance whenever it hears of such a change (its own, or another's). */
  onChange(listener: (accountId: string, userId: string | undefined) => void): void
  close(): Promise<void>
}

export const NO_LONGER_A_MEMBER = 'user is no longer a member of the account'
export const SESSIONS_ENDED = "user's sessions were ended after the token was issued"

/** A verdict kept: the caller's admission, and that of a platform JWT issued before the user's sessions start. */
interface Verdict extends Admission {
  /**
   * Set once the user's sessions were ended: the second they start after, and the admission of a platform
   * JWT issued in it or before (the verdict's own refusal, else SESSIONS_ENDED).
   */
  sessionsEnded: { after: number; admission: Admission } | undefined
}

function verdictOf(standing: AccountStanding): Verdict {
  const refusal = refusalOf(standing)
  const { requestBudget, sessionsValidAfter: after } = standing
  if (after === null) return { refusal, requestBudget, sessionsEnded: undefined }
  const admission = { refusal: refusal ?? new Unauthorized(SESSIONS_ENDED), requestBudget }
  return { refusal, requestBudget, sessionsEnded: { after, admission } }
}

/**
 * The caller's admission under the verdict: a comparison, no allocation. A token issued in the second the
 * sessions were ended counts as before it (`iat` has no finer grain), so that none minted before the end
 * survives it; a token without `iat` cannot show it came after. An app's access token answers to its grant
 * instead, revoked on its own (revoked-grants.ts): only platform JWTs are held to the end of sessions.
 */
function admissionUnder(verdict: Verdict, auth: AuthContext): Admission {
  const ended = verdict.sessionsEnded
  if (ended === undefined || auth.oauth !== undefined || (auth.iat ?? 0) > ended.after) return verdict
  return ended.admission
}

/**
 * The refusal the standing calls for: a suspended account (403), a user who is not a member (401). An
 * account this service does not hold is left to the routes that need one (`requireActiveAccount`).
 */
function refusalOf(standing: AccountStanding): DomainError | undefined {
  if (standing.status === null) return undefined
  if (standing.status !== 'active') return new Forbidden(`Account is ${standing.status}`)
  if (!standing.member) return new Unauthorized(NO_LONGER_A_MEMBER)
  return undefined
}

const keyOf = (accountId: string, userId: string) => `${accountId} ${userId}`

export async function createAccountAccess(options: AccountAccessOptions): Promise<AccountAccess> {
  const verdicts = new LRUCache<string, Verdict>({
    ...upToEntries(100_000),
    ttl: options.liveForMs,
    // The wall clock, as every other expiry of the service, read at each call (tests move it).
    perf: { now: () => Date.now() },
    ttlResolution: 0,
  })
  // Counts the changes heard, so that a look-up that a change overtook does not keep what it read.
  let changesHeard = 0
  const listeners: ((accountId: string, userId: string | undefined) => void)[] = []
  const forget = (message: string) => {
    changesHeard++
    const [accountId = '', userId] = message.split(' ')
    if (userId) verdicts.delete(message)
    else {
      // A status change concerns every member: a rare event, worth a walk over the keys.
      const prefix = `${accountId} `
      for (const key of verdicts.keys()) if (key.startsWith(prefix)) verdicts.delete(key)
    }
    for (const listener of listeners) listener(accountId, userId)
  }
  const subscriber = options.redis && duplicateRedis(options.redis, options.logger, 'account access')
  if (subscriber) {
    subscriber.on('message', (_channel: string, message: string) => forget(message))
    await subscriber.subscribe(CHANNEL)
  }

  async function lookUp(key: string, auth: AuthContext): Promise<Admission> {
    const heard = changesHeard
    const standing = await options.lookUp(auth.account_id, auth.uid)
    const verdict = verdictOf(standing)
    if (heard === changesHeard) verdicts.set(key, verdict)
    return admissionUnder(verdict, auth)
  }

  function admission(auth: AuthContext): Admission | Promise<Admission> {
    const key = keyOf(auth.account_id, auth.uid)
    const verdict = verdicts.get(key)
    return verdict === undefined ? lookUp(key, auth) : admissionUnder(verdict, auth)
  }

  return {
    refusalFor(auth) {
      const known = admission(auth)
      if (known instanceof Promise) return known.then((found) => found.refusal)
      return known.refusal
    },
    admission,
    async changed(accountId, userId) {
      const message = userId ? keyOf(accountId, userId) : accountId
      forget(message)
      try {
        await options.redis?.publish(CHANNEL, message)
      } catch (error) {
        // The change is committed: the other instances read it from the database within liveForMs.
        options.logger.warn({ err: error }, 'could not tell other instances of an account access change')
      }
    },
    onChange(listener) {
      listeners.push(listener)
    },
    async close() {
      if (subscriber) await closeRedis(subscriber)
    },
  }
}
