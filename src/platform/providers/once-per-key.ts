import type { Database } from '../db/connection.js'
import type { KeyClaims } from '../db/key-claims.js'
import { Conflict } from '../http/errors.js'

/**
 * An earlier attempt with the same key is still under way: a 409 to an API caller, and a failure a job
 * retries (never an outcome of its own).
 */
export class EffectUnderWay extends Conflict {}

/** An outside call that must happen once per key of an account, however often it is attempted. */
export interface OncePerKey<Taken, Result> {
  db: Database
  claims: KeyClaims
  accountId: string
  key: string
  /** How old an unrecorded claim must be for its process to count as dead: longer than any call takes. */
  staleAfterMs: number
  /** What a caller is told while an earlier attempt holds the key. */
  underWay: string
  /** A new attempt's id: what the call is recorded under, and what the provider is later asked for. */
  newAttemptId(): string
  /**
   * Makes the call and records its outcome under `attemptId`, marking the claim recorded in the same
   * transaction (`claims.record`). With `taken`, the provider took an earlier attempt's call already:
   * only the recording is left to do.
   */
  perform(attemptId: string, taken: Taken | undefined): Promise<Result>
  /** The outcome recorded under `attemptId`. */
  replay(attemptId: string): Promise<Result>
  /** Asks the provider whether it took the call of an attempt whose process died; undefined if not. */
  lookUp(attemptId: string): Promise<Taken | undefined>
}

/**
 * Record before the call, check on retry: the key is claimed before the provider is called. A retry finds
 * the recorded outcome (`replayed`); or the claim of an attempt still under way (EffectUnderWay); or, once
 * the claim is older than any call takes, the claim of an attempt whose process died: it takes it over and
 * asks the provider whether that attempt's call arrived before calling again, so that a retry repeats no
 * call the provider already took. A call that fails gives the key up.
 */
export async function performOncePerKey<Taken, Result>(
  effect: OncePerKey<Taken, Result>,
): Promise<{ result: Result; replayed: boolean }> {
  const { db, claims, accountId, key } = effect
  const run = async (attemptId: string, taken: Taken | undefined) => {
    try {
      return { result: await effect.perform(attemptId, taken), replayed: false }
    } catch (error) {
      await claims.release(db, accountId, key)
      throw error
    }
  }
  const attemptId = effect.newAttemptId()
  if (await claims.claim(db, accountId, key, attemptId)) return run(attemptId, undefined)
  const held = await claims.find(db, accountId, key)
  if (held?.recorded && held.attemptId) return { result: await effect.replay(held.attemptId), replayed: true }
  if (!held || Date.now() - held.claimedAt.getTime() < effect.staleAfterMs)
    throw new EffectUnderWay(effect.underWay)
  if (!(await claims.takeOver(db, accountId, key, held.claimedAt))) throw new EffectUnderWay(effect.underWay)
  // A claim from before attempts were named has nothing to ask the provider for.
  if (!held.attemptId) return run(attemptId, undefined)
  return run(held.attemptId, await effect.lookUp(held.attemptId))
}
