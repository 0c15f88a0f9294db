import { createPrivateKey, sign } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import { io, type Socket } from 'socket.io-client'
import Stripe from 'stripe'
import { percentile } from './each.js'
import { VIA_TLS_PROXY } from './scenario.js'
import { ROOMS_PATH } from './scenarios/rooms-seed.js'

/**
 * Account B of the neighbours scenario: an everyday account's steady work, open loop, in a
 * process of its own so that A's flood, driven by the bench process, does not delay B's clock. It sends API
 * reads and writes, Stripe charges (each scheduling a review request, due at once), SendGrid delivery events
 * about B's own mail, and room messages to members connected on Socket.IO, and times each. The bench tells it
 * when a phase begins (quiet, then flooded) and when to stop; every figure is kept by phase.
 */

export type Phase = 'quiet' | 'flooded'
export const PHASES: Phase[] = ['quiet', 'flooded']

/** B's everyday rates, per second. */
export interface SteadyRates {
  /** Contact list reads (GET /v1/contacts). */
  reads: number
  /** Contact creations (POST /v1/contacts). */
  writes: number
  /** Stripe charge.succeeded webhooks, each one review request due at once. */
  reviews: number
  /** SendGrid event batches of `eventsPerBatch` events about B's mail. */
  eventBatches: number
  eventsPerBatch: number
  /** Room messages from one member to the others, connected on sockets. */
  messages: number
}

export interface SteadyPlan {
  /** Base URLs of the instances: B's requests alternate between them. */
  instances: string[]
  runId: string
  accountId: string
  /** The platform JWT of B's main user (API calls, the sender of room messages). */
  token: string
  /** Other members of B's room, each connected on a socket to instance `instance`. */
  receivers: { token: string; instance: number }[]
  roomId: string
  /** STRIPE_WEBHOOK_SECRET of the run. */
  stripeSecret: string
  /** The SendGrid event webhook's private key (PKCS #8 PEM) whose public key the servers hold. */
  eventKeyPem: string
  /** B's sent mail (SQL-inserted SendGrid records): delivery events are about these. */
  records: { msgId: string; email: string }[]
  uid: string
  rates: SteadyRates
}

/** What the bench tells the steady process, and what it answers (over IPC). */
export type ToSteady = { kind: 'plan'; plan: SteadyPlan } | { kind: 'phase'; phase: Phase } | { kind: 'stop' }
export type FromSteady =
  | { kind: 'ready' }
  | { kind: 'done'; result: SteadyResult }
  | { kind: 'failed'; error: string }

export const REQUEST_KINDS = ['read', 'write', 'review webhook', 'delivery events', 'room message'] as const
export type RequestKind = (typeof REQUEST_KINDS)[number]

export interface Timings {
  count: number
  p50Ms: number
  p99Ms: number
  maxMs: number
}

export interface PhaseFigures {
  /** Response times of each kind of request, and of the API calls (reads and writes) together. */
  requests: Record<RequestKind | 'api', Timings>
  /** Answers that were not the kind's success, and connection errors, by kind. */
  failures: Record<string, number>
  /** From a message's send to its receipt by each other member. */
  sockets: Timings
  socketsExpected: number
  socketsMissed: number
  socketsDuplicated: number
  /** When the phase's first and last requests were sent (epoch ms). */
  from: number
  to: number
}

export interface SteadyResult {
  phases: Record<Phase, PhaseFigures>
  /** Customer emails of B's charges answered 200 (each must get its review request email once). */
  customers: string[]
  /** Distinct delivery events posted in batches answered 200. */
  events: number
  /** Receivers that were disconnected by the server during the run. */
  dropped: number
  /** The first answer of each kind of failure (kind and status), for the report. */
  samples: Record<string, string>
}

const REQUEST_TIMEOUT_MS = 30_000
const TICK_MS = 5
const GRACE_MS = 5_000
const MESSAGE_PREFIX = 'neighbours b '
const EVENT_TYPES = ['delivered', 'open', 'click'] as const

export const timingsOf = (values: number[]): Timings => {
  const sorted = [...values].sort((a, b) => a - b)
  return {
    count: sorted.length,
    p50Ms: percentile(sorted, 0.5),
    p99Ms: percentile(sorted, 0.99),
    maxMs: sorted.at(-1) ?? 0,
  }
}

/** SendGrid's signature headers: ECDSA over the timestamp followed by the body. */
export function sendgridSignature(key: ReturnType<typeof createPrivateKey>, body: string) {
  const timestamp = String(Math.floor(Date.now() / 1000))
  return {
    'x-twilio-email-event-webhook-signature': sign('sha256', Buffer.from(timestamp + body), key).toString(
      'base64',
    ),
    'x-twilio-email-event-webhook-timestamp': timestamp,
  }
}

/** A Stripe `charge.succeeded` of the account's customer `email`, signed as Stripe signs it. */
export function signedCharge(secret: string, id: string, accountId: string, email: string) {
  const payload = JSON.stringify({
    id: `evt_${id}`,
    object: 'event',
    type: 'charge.succeeded',
    api_version: '2024-06-20',
    created: Math.floor(Date.now() / 1000),
    data: {
      object: {
        id: `ch_${id}`,
        object: 'charge',
        amount: 4200,
        currency: 'usd',
        status: 'succeeded',
        payment_intent: `pi_${id}`,
        billing_details: { name: `Customer ${id}`, email, phone: null },
        metadata: { account_id: accountId },
      },
    },
  })
  return {
    headers: { 'stripe-signature': Stripe.webhooks.generateTestHeaderString({ payload, secret }) },
    body: payload,
  }
}

/** `size` SendGrid events about `records`, numbered from `first`; ids unique to the run and the sender. */
export function eventBatch(
  prefix: string,
  first: number,
  size: number,
  records: { msgId: string; email: string }[],
  accountId: string,
  uid: string,
): string {
  const timestamp = Math.floor(Date.now() / 1000)
  return JSON.stringify(
    Array.from({ length: size }, (_, i) => {
      const k = first + i
      const record = records[k % records.length] as { msgId: string; email: string }
      const event = EVENT_TYPES[k % EVENT_TYPES.length] as string
      return {
        email: record.email,
        timestamp,
        event,
        sg_event_id: `${prefix}-${k}`,
        sg_message_id: `${record.msgId}.recvd-bench-${k}`,
        account_id: accountId,
        uid,
        ...(event !== 'delivered' && { useragent: 'Mozilla/5.0 (bench)', ip: '192.0.2.1' }),
        ...(event === 'click' && { url: `https://bench.example/link/${k % 7}` }),
      }
    }),
  )
}

interface Sent {
  kind: RequestKind
  phase: Phase
  ms: number
  ok: boolean
}

/** Runs B's work until told to stop; `phaseOf` is read as each request is sent. */
export async function runSteady(
  plan: SteadyPlan,
  control: { ready(): void; phase(): Phase | undefined; stopped(): boolean },
): Promise<SteadyResult> {
  const eventKey = createPrivateKey(plan.eventKeyPem)
  const sent: Sent[] = []
  const customers: string[] = []
  let events = 0
  let dropped = 0
  let leaving = false

  // Receivers first: every message must find them connected.
  const arrivals = new Map<number, number[]>()
  const sockets: Socket[] = []
  await Promise.all(
    plan.receivers.map(
      (receiver) =>
        new Promise<void>((resolve, reject) => {
          const socket = io(plan.instances[receiver.instance], {
            auth: { token: receiver.token },
            transports: ['websocket'],
            reconnection: false,
            forceNew: true,
          })
          sockets.push(socket)
          socket.on('message:new', (data: { message?: { content?: string } }) => {
            const content = data.message?.content ?? ''
            if (!content.startsWith(MESSAGE_PREFIX)) return
            const seq = Number(content.slice(MESSAGE_PREFIX.length))
            arrivals.set(seq, [...(arrivals.get(seq) ?? []), performance.now()])
          })
          socket.on('disconnect', () => {
            if (!leaving) dropped++
          })
          socket.once('connect', () => resolve())
          socket.once('connect_error', (error) =>
            reject(new Error(`a receiver could not connect: ${error.message}`)),
          )
        }),
    ),
  )
  control.ready()
  while (!control.phase()) await delay(TICK_MS)

  const messages: { seq: number; phase: Phase; sentAt: number; ok: boolean }[] = []
  const phaseTimes = new Map<Phase, { from: number; to: number }>()
  const failures = new Map<string, number>()
  const samples: Record<string, string> = {}
  let turn = 0
  const call = async (
    kind: RequestKind,
    path: string,
    init: { method: 'GET' | 'POST'; headers?: Record<string, string>; body?: string },
    success: number,
    onDone?: (ok: boolean, startedAt: number) => void,
  ) => {
    const phase = control.phase() as Phase
    const times = phaseTimes.get(phase) ?? { from: Date.now(), to: 0 }
    times.to = Date.now()
    phaseTimes.set(phase, times)
    const base = plan.instances[turn++ % plan.instances.length] as string
    const startedAt = performance.now()
    let ok = false
    try {
      const response = await fetch(new URL(path, base), {
        method: init.method,
        headers: { ...VIA_TLS_PROXY, ...init.headers },
        ...(init.body !== undefined && { body: init.body }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      })
      const text = await response.text()
      ok = response.status === success
      if (!ok) {
        const key = `${phase} ${kind} ${response.status}`
        failures.set(key, (failures.get(key) ?? 0) + 1)
        samples[`${kind} ${response.status}`] ??= text.slice(0, 200)
      }
    } catch (error) {
      failures.set(`${phase} ${kind} error`, (failures.get(`${phase} ${kind} error`) ?? 0) + 1)
      samples[`${kind} error`] ??= String(error).slice(0, 200)
    }
    sent.push({ kind, phase, ms: performance.now() - startedAt, ok })
    onDone?.(ok, startedAt)
  }
  const auth = { authorization: `Bearer ${plan.token}` }
  const json = { 'content-type': 'application/json' }
  let writes = 0
  let reviews = 0
  let batches = 0
  let seq = 0
  const senders: Record<keyof Omit<SteadyRates, 'eventsPerBatch'>, () => Promise<void>> = {
    reads: () => call('read', '/v1/contacts?limit=20', { method: 'GET', headers: auth }, 200),
    writes: () => {
      const n = writes++
      return call(
        'write',
        '/v1/contacts',
        {
          method: 'POST',
          headers: { ...auth, ...json },
          body: JSON.stringify({ email: `b-${plan.runId}-${n}@bench.example`, name: `B contact ${n}` }),
        },
        201,
      )
    },
    reviews: () => {
      const n = reviews++
      const email = `b-customer-${plan.runId}-${n}@bench.example`
      const charge = signedCharge(plan.stripeSecret, `${plan.runId}_b_${n}`, plan.accountId, email)
      // A charge refused is not B's to count: Stripe would deliver it again later.
      return call(
        'review webhook',
        '/reviews/webhook/paymentprovider/charge',
        { method: 'POST', headers: { ...json, ...charge.headers }, body: charge.body },
        200,
        (ok) => {
          if (ok) customers.push(email)
        },
      )
    },
    eventBatches: () => {
      const b = batches++
      const size = plan.rates.eventsPerBatch
      const body = eventBatch(`${plan.runId}-b`, b * size, size, plan.records, plan.accountId, plan.uid)
      return call(
        'delivery events',
        '/v1/e/mailprovider/webhook',
        { method: 'POST', headers: { ...json, ...sendgridSignature(eventKey, body) }, body },
        200,
        (ok) => {
          if (ok) events += size
        },
      )
    },
    messages: () => {
      const n = seq++
      const phase = control.phase() as Phase
      return call(
        'room message',
        `${ROOMS_PATH}/${plan.roomId}/messages`,
        {
          method: 'POST',
          headers: { ...auth, ...json },
          body: JSON.stringify({ content: `${MESSAGE_PREFIX}${n}` }),
        },
        201,
        (ok, startedAt) => messages.push({ seq: n, phase, sentAt: startedAt, ok }),
      )
    },
  }

  // Open loop: each kind sends as many as its rate has made due since the start, whatever is in flight.
  const inFlight = new Set<Promise<void>>()
  const startedAt = performance.now()
  const done = Object.fromEntries(Object.keys(senders).map((kind) => [kind, 0])) as Record<string, number>
  while (!control.stopped()) {
    const elapsed = (performance.now() - startedAt) / 1000
    for (const [kind, send] of Object.entries(senders)) {
      const due = Math.floor(elapsed * plan.rates[kind as keyof SteadyRates])
      for (; (done[kind] as number) < due; done[kind] = (done[kind] as number) + 1) {
        const pending = send().finally(() => inFlight.delete(pending))
        inFlight.add(pending)
      }
    }
    await delay(TICK_MS)
  }
  await Promise.all(inFlight)
  const expecting = () =>
    messages.filter((m) => m.ok && (arrivals.get(m.seq)?.length ?? 0) < plan.receivers.length)
  const deadline = performance.now() + GRACE_MS
  while (expecting().length > 0 && performance.now() < deadline) await delay(50)
  leaving = true
  for (const socket of sockets) socket.disconnect()

  const phases = Object.fromEntries(
    PHASES.map((phase) => {
      const of = sent.filter((s) => s.phase === phase)
      const requests = Object.fromEntries(
        REQUEST_KINDS.map((kind) => [kind, timingsOf(of.filter((s) => s.kind === kind).map((s) => s.ms))]),
      ) as Record<RequestKind | 'api', Timings>
      requests.api = timingsOf(of.filter((s) => s.kind === 'read' || s.kind === 'write').map((s) => s.ms))
      const delivered = messages.filter((m) => m.phase === phase && m.ok)
      const latencies = delivered.flatMap((m) => (arrivals.get(m.seq) ?? []).map((at) => at - m.sentAt))
      const times = phaseTimes.get(phase) ?? { from: 0, to: 0 }
      return [
        phase,
        {
          requests,
          failures: Object.fromEntries(
            [...failures]
              .filter(([key]) => key.startsWith(`${phase} `))
              .map(([key, n]) => [key.slice(phase.length + 1), n]),
          ),
          sockets: timingsOf(latencies),
          socketsExpected: delivered.length * plan.receivers.length,
          socketsMissed: delivered.reduce(
            (sum, m) => sum + Math.max(0, plan.receivers.length - (arrivals.get(m.seq)?.length ?? 0)),
            0,
          ),
          socketsDuplicated: delivered.reduce(
            (sum, m) => sum + Math.max(0, (arrivals.get(m.seq)?.length ?? 0) - plan.receivers.length),
            0,
          ),
          from: times.from,
          to: times.to,
        } satisfies PhaseFigures,
      ]
    }),
  ) as Record<Phase, PhaseFigures>
  return { phases, customers, events, dropped, samples }
}
