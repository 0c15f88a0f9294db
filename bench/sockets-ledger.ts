import { latencyPercentile, newLatencyHistogram, recordLatency } from './latency.js'

/**
 * The `message:new` deliveries of the sockets scenario, checked against who should get them: each message
 * is expected by the members of its room whose client was connected when it was sent, once each. Latency is
 * from the send's response (its 201) to the member's event, an event that beats the response counting as 0,
 * and from the send's request.
 */

/** Which part of the run a message was sent in; the wave's reconnecting clients are counted apart. */
export type Phase = 'steady' | 'wave' | 'after'
export const WAVE_RECONNECTED = 'wave, to the reconnecting clients'
type Bucket = Phase | typeof WAVE_RECONNECTED

interface Sent {
  room: number
  phase: Phase
  /** Clients that must receive it: connected members when it was sent. */
  expected: Set<number>
  /** When each client received it (ms, performance.now()). */
  arrivals: Map<number, number>
  sentAt: number
  answeredAt: number | undefined
}

export interface LatencyFigures {
  deliveries: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

/** A bucket's latency from the send's response (the measure) and from its request. */
export interface Latencies {
  fromResponse: LatencyFigures
  fromRequest: LatencyFigures
}

export interface LedgerSummary {
  messages: number
  expected: number
  /** Expected deliveries that arrived. */
  delivered: number
  missed: number
  duplicated: number
  /** Events of a room the receiving client is not a member of. */
  toNonMembers: number
  /** Members that received a message sent while they were not connected (reconnecting): allowed, counted. */
  unexpectedMembers: number
  /** Deliveries that arrived before the send's response did (recorded as 0 ms). */
  beforeResponse: number
  latency: Partial<Record<Bucket, Latencies>>
}

/** Latencies of one kind (deliveries, or the sends' answers): their count, p50, p99 and max. */
export class Histogram {
  readonly counts = newLatencyHistogram()
  deliveries = 0
  maxMs = 0
  record(ms: number) {
    recordLatency(this.counts, ms)
    this.deliveries++
    this.maxMs = Math.max(this.maxMs, ms)
  }
  figures(): LatencyFigures {
    const { deliveries, maxMs } = this
    const p = (fraction: number) => latencyPercentile(this.counts, fraction)
    return { deliveries, p50Ms: p(0.5), p99Ms: p(0.99), maxMs }
  }
}

export class DeliveryLedger {
  readonly #sent = new Map<number, Sent>()
  readonly #histograms = new Map<Bucket, { fromResponse: Histogram; fromRequest: Histogram }>()
  readonly #waveClients = new Set<number>()
  #duplicated = 0
  #toNonMembers = 0
  #unexpectedMembers = 0
  #beforeResponse = 0

  /** `roomMembers[r]`: the clients that are members of room r. */
  constructor(private readonly roomMembers: readonly (readonly number[])[]) {}

  /**
   * The clients the wave disconnects (now) and reconnects: what they had not received yet is no longer
   * expected of them, and their deliveries of the wave are counted apart.
   */
  disconnectingWave(clients: Iterable<number>): void {
    for (const client of clients) this.#waveClients.add(client)
    for (const sent of this.#sent.values())
      for (const client of sent.expected)
        if (this.#waveClients.has(client) && !sent.arrivals.has(client)) sent.expected.delete(client)
  }

  /** Message `seq` is being sent to `room`; `connected` tells which clients are connected now. */
  sending(seq: number, room: number, phase: Phase, connected: (client: number) => boolean, at: number): void {
    const expected = new Set((this.roomMembers[room] ?? []).filter(connected))
    this.#sent.set(seq, { room, phase, expected, arrivals: new Map(), sentAt: at, answeredAt: undefined })
  }

  /** The send was answered 201 at `at`: deliveries already in get their latency now. */
  answered(seq: number, at: number): void {
    const sent = this.#sent.get(seq)
    if (!sent) return
    sent.answeredAt = at
    for (const [client, arrivedAt] of sent.arrivals) this.#measure(sent, client, arrivedAt)
  }

  /** The send failed: nothing was stored, nothing is expected (the run counts the failure itself). */
  failed(seq: number): void {
    this.#sent.delete(seq)
  }

  /** Client `client` received `message:new` of message `seq`, which names room `room`, at `at`. */
  arrived(client: number, seq: number, room: number | undefined, at: number): void {
    const sent = this.#sent.get(seq)
    const member = (r: number) => this.roomMembers[r]?.includes(client) ?? false
    if (room === undefined || !member(room) || (sent && !member(sent.room))) {
      this.#toNonMembers++
      return
    }
    // Not a message this run sent (or whose send failed): nothing is expected of it.
    if (!sent) return
    if (sent.arrivals.has(client)) {
      this.#duplicated++
      return
    }
    sent.arrivals.set(client, at)
    if (sent.expected.has(client)) this.#measure(sent, client, at)
    else this.#unexpectedMembers++
  }

  #measure(sent: Sent, client: number, arrivedAt: number): void {
    if (!sent.expected.has(client) || sent.answeredAt === undefined) return
    const ms = arrivedAt - sent.answeredAt
    if (ms < 0) this.#beforeResponse++
    const bucket = sent.phase === 'wave' && this.#waveClients.has(client) ? WAVE_RECONNECTED : sent.phase
    let histograms = this.#histograms.get(bucket)
    if (!histograms) {
      histograms = { fromResponse: new Histogram(), fromRequest: new Histogram() }
      this.#histograms.set(bucket, histograms)
    }
    histograms.fromResponse.record(Math.max(0, ms))
    histograms.fromRequest.record(arrivedAt - sent.sentAt)
  }

  /** Expected deliveries still missing. */
  outstanding(): number {
    let missing = 0
    for (const sent of this.#sent.values())
      for (const client of sent.expected) missing += sent.arrivals.has(client) ? 0 : 1
    return missing
  }

  summary(): LedgerSummary {
    let expected = 0
    for (const sent of this.#sent.values()) expected += sent.expected.size
    const missed = this.outstanding()
    const latency: LedgerSummary['latency'] = {}
    for (const [bucket, { fromResponse, fromRequest }] of this.#histograms)
      latency[bucket] = { fromResponse: fromResponse.figures(), fromRequest: fromRequest.figures() }
    return {
      messages: this.#sent.size,
      expected,
      delivered: expected - missed,
      missed,
      duplicated: this.#duplicated,
      toNonMembers: this.#toNonMembers,
      unexpectedMembers: this.#unexpectedMembers,
      beforeResponse: this.#beforeResponse,
      latency,
    }
  }
}
