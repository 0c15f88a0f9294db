import type { AppWebhookSettings } from '../../config.js'
import { type ClaimedDelivery, claimDueDeliveries, settleDelivery } from './webhook-deliveries.repository.js'
import { attemptDelivery, settlementOf, type WebhooksDeps } from './webhooks.service.js'

/**
 * How long past the timeout a claimed delivery stays leased: an instance that dies in the middle of an
 * attempt leaves it to be retried once its lease ends.
 */
const LEASE_MARGIN_MS = 30_000

/** Sends the app webhook deliveries that are due, from every instance that runs workers. */
export interface WebhookSender {
  start(): void
  /** Claims no more, and waits up to `timeoutMs` for the attempts in flight here. */
  stop(timeoutMs: number): Promise<void>
}

/**
 * Keeps up to APP_WEBHOOK_CONCURRENCY attempts in flight in this instance, each app's up to
 * APP_WEBHOOK_CONCURRENCY_PER_APP across every instance (the claim counts the app's leases). An app at its
 * bound holds those slots only, for at most the timeout each; its other deliveries wait in the table, not in
 * a worker, and the other apps' are claimed meanwhile. Claims every APP_WEBHOOK_POLL_MS, and again each time
 * an attempt ends (its app may have more waiting).
 */
export function createWebhookSender(deps: WebhooksDeps, settings: AppWebhookSettings): WebhookSender {
  const inFlight = new Set<Promise<void>>()
  let claiming: Promise<void> | undefined
  let claimAgain = false
  let poll: NodeJS.Timeout | undefined
  let stopped = true

  async function send(delivery: ClaimedDelivery): Promise<void> {
    const result = await attemptDelivery(deps, delivery)
    const settlement = settlementOf(result, delivery.seriesAttempts, settings.retryScheduleMs)
    if (!(await settleDelivery(deps.db, delivery, settlement)))
      deps.log.warn({ delivery_id: delivery.id }, 'app webhook attempt outlived its lease; not recorded')
  }

  function track(delivery: ClaimedDelivery): void {
    const attempt = send(delivery)
      .catch((error: unknown) =>
        deps.log.error({ err: error, delivery_id: delivery.id }, 'app webhook attempt failed'),
      )
      .finally(() => {
        inFlight.delete(attempt)
        wake()
      })
    inFlight.add(attempt)
  }

  async function claimWhileSlotsFree(): Promise<void> {
    do {
      claimAgain = false
      const free = settings.concurrency - inFlight.size
      if (free <= 0 || stopped) return
      const claimed = await claimDueDeliveries(deps.db, {
        perApp: settings.concurrencyPerApp,
        limit: free,
        leaseMs: settings.timeoutMs + LEASE_MARGIN_MS,
      })
      for (const delivery of claimed) track(delivery)
    } while (claimAgain && !stopped)
  }

  /** Claims now, or once the claim under way ends. */
  function wake(): void {
    if (stopped) return
    if (claiming) {
      claimAgain = true
      return
    }
    claiming = claimWhileSlotsFree()
      .catch((error: unknown) =>
        deps.log.error({ err: error }, 'app webhook deliveries could not be claimed'),
      )
      .finally(() => {
        claiming = undefined
      })
  }

  return {
    start() {
      stopped = false
      poll = setInterval(wake, settings.pollMs)
      wake()
    },

    async stop(timeoutMs) {
      stopped = true
      clearInterval(poll)
      let timer: NodeJS.Timeout | undefined
      const timeout = new Promise((resolve) => {
        timer = setTimeout(resolve, timeoutMs)
      })
      await Promise.race([Promise.allSettled([claiming, ...inFlight]), timeout])
      clearTimeout(timer)
    },
  }
}
