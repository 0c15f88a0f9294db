import { monitorEventLoopDelay } from 'node:perf_hooks'
import { setTimeout as delay } from 'node:timers/promises'
import { io, type Socket } from 'socket.io-client'
import { ROOMS_PATH, random } from './scenarios/rooms-seed.js'
import type { Chat } from './sockets-chat.js'
import {
  DeliveryLedger,
  Histogram,
  type LatencyFigures,
  type LedgerSummary,
  type Phase,
} from './sockets-ledger.js'

/**
 * The load of the sockets scenario, run in a process of its own (sockets-load-process.ts): connects every
 * client to its instance, sends messages into rooms at a steady rate through the HTTP API, alternating
 * instances, checks each `message:new` against the ledger, and disconnects and reconnects a wave of clients
 * while the messages go on.
 */

export interface LoadPlan extends Chat {
  /** Base URLs of the instances; a client's `instance` indexes them. */
  instances: string[]
  /** Messages a second, over all instances. */
  rate: number
  /** How long the steady phase sends. */
  seconds: number
  /** Clients disconnected at once and reconnected at once, to the other instance, after the steady phase. */
  wave: number
}

export interface ConnectFigures {
  attempted: number
  connected: number
  seconds: number
  /** The first few refusals or errors, for the report. */
  errors: string[]
}

export interface LoadResult {
  connect: ConnectFigures
  wave: ConnectFigures | undefined
  /**
   * The sends' answers (from the request to the 201's body) by the phase they were sent in, as the
   * deliveries are: sends queued behind a reconnecting wave are not the steady figure.
   */
  sends: { sent: number; failed: number; answered: Partial<Record<Phase, LatencyFigures>> }
  ledger: LedgerSummary
  /** Clients disconnected during the run other than by the load itself (none should be), by reason. */
  dropped: Record<string, number>
  /** The load process's own event-loop delay, p99: above a few ms, the load generator adds to the latency. */
  loopDelayP99Ms: number
}

/** What the load tells its supervisor between phases (sockets-load-process.ts passes it over IPC). */
export interface LoadHooks {
  /** Every client has connected (or failed to): the servers' memory is read before the messages start. */
  connected(figures: ConnectFigures): Promise<void>
}

// Connections opened at once while the clients first connect.
const CONNECT_CONCURRENCY = 200
const SEND_TICK_MS = 5
const CONNECT_TIMEOUT_MS = 30_000
const SEND_TIMEOUT_MS = 10_000
// The wave's phase lasts at least this long, and past the last reconnection by WAVE_TAIL_MS.
const WAVE_MIN_MS = 10_000
const WAVE_TAIL_MS = 2_000
/** How long deliveries may still come after the last send was answered before they count as missed. */
export const GRACE_MS = 5_000
const CONTENT_PREFIX = 'sockets bench '
const MAX_ERRORS_KEPT = 5

/** The message number in a `message:new` payload this load sent; NaN for any other. */
function sequenceOf(data: unknown): number {
  const content = (data as { message?: { content?: unknown } } | undefined)?.message?.content
  return typeof content === 'string' && content.startsWith(CONTENT_PREFIX)
    ? Number(content.slice(CONTENT_PREFIX.length))
    : Number.NaN
}

const figuresOf = (
  attempted: number,
  results: (string | undefined)[],
  startedAt: number,
): ConnectFigures => ({
  attempted,
  connected: results.filter((error) => error === undefined).length,
  seconds: (performance.now() - startedAt) / 1000,
  errors: [...new Set(results.filter((error) => error !== undefined))].slice(0, MAX_ERRORS_KEPT),
})

export async function runSocketLoad(plan: LoadPlan, hooks: LoadHooks): Promise<LoadResult> {
  const roomIndex = new Map(plan.rooms.map((room, r) => [room.id, r]))
  const ledger = new DeliveryLedger(plan.rooms.map((room) => room.members))
  const sockets: (Socket | undefined)[] = []
  const connected: boolean[] = plan.clients.map(() => false)
  let leaving = false
  const dropped: Record<string, number> = {}
  const loop = monitorEventLoopDelay({ resolution: 10 })
  loop.enable()

  /** Connects client `c` to instance `instance`; resolves with the refusal's message, if any. */
  function connect(c: number, instance: number): Promise<string | undefined> {
    const { token } = plan.clients[c] as { token: string }
    const socket = io(plan.instances[instance], {
      auth: { token },
      // Several instances behind a balancer without sticky sessions take WebSocket only (no polling).
      transports: ['websocket'],
      reconnection: false,
      forceNew: true,
    })
    sockets[c] = socket
    socket.on('message:new', (data: { room_id?: string }) =>
      ledger.arrived(c, sequenceOf(data), roomIndex.get(data.room_id ?? ''), performance.now()),
    )
    socket.on('disconnect', (reason) => {
      connected[c] = false
      if (!leaving && reason !== 'io client disconnect') dropped[reason] = (dropped[reason] ?? 0) + 1
    })
    return new Promise((resolve) => {
      // A handshake the server drops after the upgrade ends in neither event: without this, the wave (and the
      // run) waited for it for ever on a loaded machine.
      const timer = setTimeout(() => {
        socket.disconnect()
        resolve(`no answer within ${CONNECT_TIMEOUT_MS / 1000} s`)
      }, CONNECT_TIMEOUT_MS)
      socket.once('connect', () => {
        clearTimeout(timer)
        connected[c] = true
        resolve(undefined)
      })
      socket.once('connect_error', (error) => {
        clearTimeout(timer)
        resolve(error.message)
      })
    })
  }

  async function connectAll(clients: number[], concurrency: number, instanceOf: (c: number) => number) {
    const startedAt = performance.now()
    const results: (string | undefined)[] = []
    let next = 0
    const worker = async () => {
      while (next < clients.length) {
        const c = clients[next++] as number
        results.push(await connect(c, instanceOf(c)))
      }
    }
    await Promise.all(Array.from({ length: Math.min(concurrency, clients.length) }, worker))
    return figuresOf(clients.length, results, startedAt)
  }

  const everyone = plan.clients.map((_, c) => c)
  const connectFigures = await connectAll(
    everyone,
    CONNECT_CONCURRENCY,
    (c) => plan.clients[c]?.instance ?? 0,
  )
  await hooks.connected(connectFigures)

  // Sending: open loop at `rate`, each message to a room drawn at random by one of its members.
  const next = random(7)
  const sendLatency: Record<Phase, Histogram> = {
    steady: new Histogram(),
    wave: new Histogram(),
    after: new Histogram(),
  }
  let sent = 0
  let failed = 0
  let phase: Phase = 'steady'
  const inFlight = new Set<Promise<void>>()
  async function send(seq: number) {
    const r = Math.floor(next() * plan.rooms.length)
    const room = plan.rooms[r] as Chat['rooms'][number]
    const sender = room.members[Math.floor(next() * room.members.length)] as number
    const base = plan.instances[seq % plan.instances.length] as string
    const startedAt = performance.now()
    const sentIn = phase
    ledger.sending(seq, r, sentIn, (c) => connected[c] === true, startedAt)
    try {
      const response = await fetch(new URL(`${ROOMS_PATH}/${room.id}/messages`, base), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${plan.clients[sender]?.token}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ content: `${CONTENT_PREFIX}${seq}` }),
        signal: AbortSignal.timeout(SEND_TIMEOUT_MS),
      })
      await response.arrayBuffer()
      const answeredAt = performance.now()
      if (response.status !== 201) throw new Error(String(response.status))
      ledger.answered(seq, answeredAt)
      sendLatency[sentIn].record(answeredAt - startedAt)
    } catch {
      failed++
      ledger.failed(seq)
    }
  }
  const sendingSince = performance.now()
  let sending = true
  const sender = (async () => {
    while (sending) {
      const due = Math.floor(((performance.now() - sendingSince) / 1000) * plan.rate)
      for (; sent < due; sent++) {
        const pending = send(sent).finally(() => inFlight.delete(pending))
        inFlight.add(pending)
      }
      await delay(SEND_TICK_MS)
    }
  })()

  await delay(plan.seconds * 1000)
  let wave: ConnectFigures | undefined
  if (plan.wave > 0) {
    // Spread over the clients (so over both instances and every account), disconnected at once.
    const step = plan.clients.length / Math.min(plan.wave, plan.clients.length)
    const waveClients = Array.from({ length: Math.min(plan.wave, plan.clients.length) }, (_, i) =>
      Math.floor(i * step),
    )
    phase = 'wave'
    const waveStartedAt = performance.now()
    ledger.disconnectingWave(waveClients)
    for (const c of waveClients) {
      connected[c] = false
      sockets[c]?.disconnect()
    }
    // As after a deploy: each lands on another instance than before, whose caches never saw its token.
    const other = (c: number) => ((plan.clients[c]?.instance ?? 0) + 1) % plan.instances.length
    wave = await connectAll(waveClients, waveClients.length, other)
    const elapsed = performance.now() - waveStartedAt
    await delay(Math.max(WAVE_MIN_MS - elapsed, WAVE_TAIL_MS))
  }
  sending = false
  await sender
  await Promise.all(inFlight)
  const deadline = performance.now() + GRACE_MS
  while (ledger.outstanding() > 0 && performance.now() < deadline) await delay(50)
  leaving = true
  for (const socket of sockets) socket?.disconnect()
  loop.disable()
  return {
    connect: connectFigures,
    wave,
    sends: {
      sent,
      failed,
      answered: Object.fromEntries(
        Object.entries(sendLatency)
          .filter(([, answers]) => answers.deliveries > 0)
          .map(([sentIn, answers]) => [sentIn, answers.figures()]),
      ),
    },
    ledger: ledger.summary(),
    dropped,
    loopDelayP99Ms: loop.percentile(99) / 1e6,
  }
}
