/**
 * One write for many callers: each call waits while `maxInFlight` writes run, then goes with every call that
 * arrived meanwhile (at most `maxItems`) in the next one. A burst of requests then costs a few statements
 * and commits instead of one each, and an idle moment writes at once: nothing waits on a timer. Each call
 * settles with the write that carried it; a failed write rejects all of its calls, none of others.
 */
export function gatherWrites<T>(
  write: (items: T[]) => Promise<void>,
  options: { maxInFlight: number; maxItems: number },
): (item: T) => Promise<void> {
  let waiting: { item: T; settle: (error?: unknown) => void }[] = []
  let inFlight = 0

  const next = () => {
    while (inFlight < options.maxInFlight && waiting.length > 0) {
      const batch = waiting.slice(0, options.maxItems)
      waiting = waiting.slice(batch.length)
      inFlight++
      write(batch.map((call) => call.item)).then(
        () => settleAll(batch),
        (error: unknown) => settleAll(batch, error ?? new Error('gathered write failed')),
      )
    }
  }
  const settleAll = (batch: typeof waiting, error?: unknown) => {
    inFlight--
    for (const call of batch) call.settle(error)
    next()
  }

  return (item) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ item, settle: (error) => (error === undefined ? resolve() : reject(error)) })
      next()
    })
}
