/**
 * A record's `delivery_status` is its newest delivery event by the event's own timestamp. At an equal
 * timestamp (SendGrid stamps whole seconds) the later place here wins: the engagement steps in their
 * natural order, then the final states, which no other event of the same second may replace. It is
 * derived from the stored events when read, so events arriving late or out of order can never move it
 * back, and storing an event needs no update of its record.
 */
export const DELIVERY_STATUS_ORDER = [
  'processed',
  'deferred',
  'delivered',
  'open',
  'click',
  'group_resubscribe',
  'group_unsubscribe',
  'unsubscribe',
  'spamreport',
  'dropped',
  'bounce',
] as const

const rank = (event: string) => (DELIVERY_STATUS_ORDER as readonly string[]).indexOf(event)

/** The newest ranked event's name, or null when the record has none. */
export function deliveryStatus(events: { event: string; timestamp: number }[]): string | null {
  let newest: { event: string; timestamp: number } | undefined
  for (const candidate of events) {
    if (rank(candidate.event) < 0) continue
    const later =
      !newest ||
      candidate.timestamp > newest.timestamp ||
      (candidate.timestamp === newest.timestamp && rank(candidate.event) > rank(newest.event))
    if (later) newest = candidate
  }
  return newest?.event ?? null
}
