import {
  BrokenCircuitError,
  type BulkheadPolicy,
  BulkheadRejectedError,
  bulkhead,
  type CircuitBreakerPolicy,
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleAll,
} from 'cockatiel'
import { ServiceUnavailable } from '../http/errors.js'
import type { Logger } from '../log/logger.js'

/**
 * Every outside service the platform calls, each with a circuit and a bulkhead of its own. A closed list, so
 * that `provider_circuit_state` has a bounded label set.
 */
export const PROVIDERS = [
  'sendgrid',
  'twilio',
  'graph',
  'edge',
  'listings',
  'square',
  'socket_service',
] as const
export type ProviderName = (typeof PROVIDERS)[number]

/** PROVIDER_CIRCUIT_FAILURES, PROVIDER_CIRCUIT_HALF_OPEN_AFTER_MS, PROVIDER_CONCURRENCY, PROVIDER_TIMEOUT_MS. */
export interface ProviderCircuitSettings {
  /** Consecutive failures (5xx, timeouts, network errors) that open a provider's circuit. */
  failures: number
  /** How long an open circuit refuses calls before one call may test the provider again. */
  halfOpenAfterMs: number
  /** Calls in flight to one provider from this process; one more is refused at once. */
  concurrency: number
  /** How long a call may take before it counts as failed (the default of every provider call). */
  timeoutMs: number
}

export const PROVIDER_CIRCUIT_DEFAULTS: ProviderCircuitSettings = {
  failures: 5,
  halfOpenAfterMs: 30_000,
  concurrency: 20,
  timeoutMs: 10_000,
}

/**
 * pg-boss's retries of a job that calls a provider: 30 s doubled each time, plus up to as much again at random
 * (pg-boss's backoff), 8 times: from 2.1 to 4.25 hours between the first failure and the last attempt, so
 * that an hour's outage fails none. Refusals by an open circuit spend none of them (queue.ts defers them).
 */
export const PROVIDER_JOB_RETRIES = { retryLimit: 8, retryDelaySeconds: 30, retryBackoff: true } as const

/**
 * `provider_circuit_state`'s values: ordered by how much of the provider's traffic is refused, so that an
 * alert can be `> 0` (some refused) or `== 2` (all refused).
 */
export const CIRCUIT_STATE_VALUES = { closed: 0, half_open: 1, open: 2 } as const

/**
 * A provider call refused before it was made: the provider's circuit is open (it failed repeatedly), or as
 * many calls as PROVIDER_CONCURRENCY are already in flight to it. The API answers 503 with `Retry-After`;
 * a job runs again after `retryAfterSeconds` without spending a retry, as it never reached the provider.
 */
export class ProviderUnavailable extends ServiceUnavailable {
  constructor(
    readonly provider: ProviderName,
    readonly reason: 'circuit_open' | 'busy',
    retryAfterSeconds: number,
  ) {
    super(
      reason === 'circuit_open'
        ? `${provider} is failing; calls to it resume shortly`
        : `${provider} is busy; retry shortly`,
      retryAfterSeconds,
    )
  }
}

interface ProviderGuard {
  circuit: CircuitBreakerPolicy
  bulkhead: BulkheadPolicy
  /** When the circuit last opened (ms), for how long it still refuses. */
  openedAt: number
}

let settings = PROVIDER_CIRCUIT_DEFAULTS
let guards = new Map<ProviderName, ProviderGuard>()

function createGuard(provider: ProviderName, log: Logger | undefined): ProviderGuard {
  // Every error the call throws is the provider's (a timeout, a refused connection); answers are judged by
  // `isFailure` in callProvider, which throws them in here so that the breaker counts them.
  const circuit = circuitBreaker(handleAll, {
    halfOpenAfter: settings.halfOpenAfterMs,
    breaker: new ConsecutiveBreaker(settings.failures),
  })
  const guard = { circuit, bulkhead: bulkhead(settings.concurrency, 0), openedAt: 0 }
  // Logged once per change, never per refused call.
  circuit.onBreak(() => {
    guard.openedAt = Date.now()
    log?.warn(
      { provider, failures: settings.failures, half_open_after_ms: settings.halfOpenAfterMs },
      'provider circuit opened: calls are refused until one succeeds again',
    )
  })
  circuit.onReset(() => log?.info({ provider }, 'provider circuit closed: calls resume'))
  return guard
}

/**
 * Sets this process's circuits and bulkheads, closed and empty: once per app built (tests build several; the
 * last one's settings hold). Calls before it get the defaults.
 */
export function configureProviderCircuits(next: ProviderCircuitSettings, log?: Logger): void {
  settings = next
  guards = new Map(PROVIDERS.map((provider) => [provider, createGuard(provider, log)]))
}

const guardOf = (provider: ProviderName): ProviderGuard => {
  let guard = guards.get(provider)
  if (!guard) {
    guard = createGuard(provider, undefined)
    guards.set(provider, guard)
  }
  return guard
}

/** The configured timeout of a provider call (PROVIDER_TIMEOUT_MS). */
export const providerTimeoutMs = (): number => settings.timeoutMs

/** Whole seconds until an open circuit lets a call test the provider; at least 1. */
function secondsUntilHalfOpen(guard: ProviderGuard): number {
  return Math.max(1, Math.ceil((guard.openedAt + settings.halfOpenAfterMs - Date.now()) / 1000))
}

/** Thrown inside the circuit for an answer that counts as the provider failing; unwrapped by callProvider. */
class FailedAnswer<T> extends Error {
  constructor(readonly answer: T) {
    super('provider failed')
  }
}

/**
 * Runs one call to `provider` through its circuit and its bulkhead. An open circuit refuses at once; so does
 * a half-open one while its one test call is under way (cockatiel would queue the caller behind the test,
 * holding a worker for as long as the test may take). A full bulkhead refuses at once too. A call that
 * throws, or whose answer `isFailure` says is the provider failing (a 5xx; never a 4xx, which is the
 * caller's), counts towards opening the circuit; the answer is still returned to the caller.
 */
export async function callProvider<T>(
  provider: ProviderName,
  call: () => Promise<T>,
  isFailure: (answer: T) => boolean,
): Promise<T> {
  const guard = guardOf(provider)
  const state = guard.circuit.state
  if (state === CircuitState.HalfOpen)
    throw new ProviderUnavailable(provider, 'circuit_open', Math.ceil(settings.timeoutMs / 1000))
  if (state === CircuitState.Open && Date.now() - guard.openedAt < settings.halfOpenAfterMs)
    throw new ProviderUnavailable(provider, 'circuit_open', secondsUntilHalfOpen(guard))
  try {
    return await guard.bulkhead.execute(() =>
      guard.circuit.execute(async () => {
        const answer = await call()
        if (isFailure(answer)) throw new FailedAnswer(answer)
        return answer
      }),
    )
  } catch (error) {
    if (error instanceof FailedAnswer) return error.answer as T
    if (error instanceof BulkheadRejectedError) throw new ProviderUnavailable(provider, 'busy', 1)
    // Opened by another call between the check above and this one.
    if (error instanceof BrokenCircuitError)
      throw new ProviderUnavailable(provider, 'circuit_open', secondsUntilHalfOpen(guard))
    throw error
  }
}

/** Each provider's circuit as `CIRCUIT_STATE_VALUES` numbers it, for `/metrics`. */
export function providerCircuitStates(): { provider: ProviderName; state: number }[] {
  return PROVIDERS.map((provider) => {
    const state = guardOf(provider).circuit.state
    const value =
      state === CircuitState.Closed
        ? CIRCUIT_STATE_VALUES.closed
        : state === CircuitState.HalfOpen
          ? CIRCUIT_STATE_VALUES.half_open
          : CIRCUIT_STATE_VALUES.open
    return { provider, state: value }
  })
}
