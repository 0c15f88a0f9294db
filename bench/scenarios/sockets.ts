import { once } from 'node:events'
import { setTimeout as delay } from 'node:timers/promises'
import { startNode, stopChild } from '../children.js'
import { loadLine, processShare, processTicks, residentBytes, sampleMachine } from '../machine.js'
import { UsageError } from '../options.js'
import { formatTable } from '../report.js'
import type { Measured, MeasuredScenario, MeasureOptions, Target } from '../scenario.js'
import { REPO_ROOT } from '../servers.js'
import { prepareChat } from '../sockets-chat.js'
import type { Latencies, LatencyFigures, LedgerSummary } from '../sockets-ledger.js'
import { WAVE_RECONNECTED } from '../sockets-ledger.js'
import type { ConnectFigures, LoadPlan, LoadResult } from '../sockets-load.js'
import type { FromLoad, ToLoad } from '../sockets-load-process.js'

/**
 * Two instances as `npm start` runs them, on one PostgreSQL database and Redis, hold
 * thousands of authenticated Socket.IO clients (connected from a process of their own) while messages are
 * posted into their rooms through the HTTP API; every member's `message:new` is checked and timed.
 */

// The targets.
const P99_TARGET_MS = 100
const WAVE_P99_TARGET_MS = 250
const BYTES_PER_SOCKET_TARGET = 20_000
const ROOMS_PER_CLIENT = 4
const MB = 1024 * 1024
const FINISH_GRACE_MS = 10_000

const DEFAULTS = { 'sockets-per-instance': 5_000, rate: 200, 'reconnect-wave': 1_000 }
const LIMITS = { 'sockets-per-instance': 9_000, rate: 5_000, 'reconnect-wave': 18_000 }
type Flag = keyof typeof LIMITS

function flagValue(values: Record<string, string | undefined>, flag: Flag, least = 1): number {
  const raw = values[flag]
  if (raw === undefined) return DEFAULTS[flag]
  const value = Number(raw)
  if (!Number.isInteger(value) || value < least || value > LIMITS[flag])
    throw new UsageError(`--${flag} must be an integer between ${least} and ${LIMITS[flag]}`)
  return value
}

/** The run's shape from its flags; `--duration` (the bench's own) is the steady phase's seconds. */
function shapeOf(options: MeasureOptions) {
  const socketsPerInstance = flagValue(options.flags, 'sockets-per-instance')
  return {
    socketsPerInstance,
    rate: flagValue(options.flags, 'rate'),
    seconds: options.durationSeconds,
    wave: Math.min(flagValue(options.flags, 'reconnect-wave', 0), 2 * socketsPerInstance),
  }
}

interface Memory {
  rss: number
  heapUsed: number
}

/** The instance's RSS (/proc) and, from the preloaded memory-probe.mjs, its heap in use after a collection. */
async function memoryOf(instance: Target): Promise<Memory> {
  const child = instance.process
  if (!child || !instance.pid) throw new Error('the sockets scenario reads the servers it started')
  const answer = once(child, 'message') as Promise<[{ usage: NodeJS.MemoryUsage }]>
  child.send({ kind: 'memory-probe' })
  const [{ usage }] = await answer
  return { rss: residentBytes(instance.pid), heapUsed: usage.heapUsed }
}

const PROBE_URL = new URL('../memory-probe.mjs', import.meta.url).href

/** What the bench does while the load runs: read memory once connected, sample the machine at the end. */
interface LoadWatch {
  connected(loadPid: number | undefined): Promise<void>
  /** The load has reported, its process still alive (its CPU time counts). */
  done(): void
}

/** Runs the load process on `plan`, telling `watch` when its clients are connected and when it is done. */
async function runLoad(plan: LoadPlan, watch: LoadWatch): Promise<LoadResult> {
  const load = startNode('load', ['--import', 'tsx', 'bench/sockets-load-process.ts'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH },
  })
  try {
    const result = new Promise<LoadResult>((resolve, reject) => {
      load.process.on('message', (message: FromLoad) => {
        if (message.kind === 'connected')
          void watch
            .connected(load.process.pid)
            .then(() => load.process.send({ kind: 'proceed' } satisfies ToLoad))
        else if (message.kind === 'done') {
          watch.done()
          load.process.send({ kind: 'finish' } satisfies ToLoad)
          resolve(message.result)
        } else reject(new Error(`the load process failed: ${message.error}`))
      })
      void load.exited.then(() => reject(new Error(`the load process exited:\n${load.output()}`)))
    })
    load.process.send({ kind: 'plan', plan } satisfies ToLoad)
    const outcome = await result
    // Told to finish, it exits of itself (writing a --cpu-prof profile, when asked for one).
    await Promise.race([load.exited, delay(FINISH_GRACE_MS)])
    return outcome
  } finally {
    await stopChild(load)
  }
}

const ms = (value: number) => `${value.toFixed(1)} ms`
const kB = (bytes: number) => `${(bytes / 1024).toFixed(1)} kB`

function connectLine(label: string, figures: ConnectFigures): string {
  const rate = figures.connected / Math.max(figures.seconds, 1e-3)
  const errors = figures.errors.length > 0 ? `; errors: ${figures.errors.join('; ')}` : ''
  return (
    `${label}: ${figures.connected} of ${figures.attempted} connected in ${figures.seconds.toFixed(2)} s, ` +
    `${rate.toFixed(0)} sockets/s${errors}`
  )
}

/** The sends' answers by the phase they were sent in, as the deliveries' latency is. */
function sendLines(answered: LoadResult['sends']['answered']): string {
  const phases = [
    ['steady', answered.steady],
    ['during the wave', answered.wave],
  ] as const
  return phases
    .filter(([, figures]) => figures !== undefined)
    .map(
      ([label, f]) =>
        `${label}: ${f?.deliveries} p50 ${ms(f?.p50Ms ?? 0)}, p99 ${ms(f?.p99Ms ?? 0)}, max ${ms(f?.maxMs ?? 0)}`,
    )
    .join('; ')
}

function latencyRows(ledger: LedgerSummary): string[][] {
  const figures = (f: LatencyFigures) => [ms(f.p50Ms), ms(f.p99Ms), ms(f.maxMs)]
  const row = (label: string, latencies: Latencies | undefined) =>
    latencies
      ? [
          label,
          String(latencies.fromResponse.deliveries),
          ...figures(latencies.fromResponse),
          ...figures(latencies.fromRequest),
        ]
      : [label, '0']
  return [
    ['message:new latency', 'deliveries', 'p50', 'p99', 'max', 'from send: p50', 'p99', 'max'],
    row('steady', ledger.latency.steady),
    row('during the wave, other clients', ledger.latency.wave),
    row(WAVE_RECONNECTED, ledger.latency[WAVE_RECONNECTED]),
  ]
}

function memoryRows(instances: Target[], idle: Memory[], held: Memory[], sockets: number[]): string[][] {
  return [
    ['instance', 'sockets', 'idle RSS', 'RSS', 'per socket', 'idle heap', 'heap', 'per socket'],
    ...instances.map((_, i) => {
      const before = idle[i] as Memory
      const after = held[i] as Memory
      const n = Math.max(1, sockets[i] ?? 0)
      return [
        String(i + 1),
        String(sockets[i] ?? 0),
        `${(before.rss / MB).toFixed(0)} MB`,
        `${(after.rss / MB).toFixed(0)} MB`,
        kB((after.rss - before.rss) / n),
        `${(before.heapUsed / MB).toFixed(0)} MB`,
        `${(after.heapUsed / MB).toFixed(0)} MB`,
        kB((after.heapUsed - before.heapUsed) / n),
      ]
    }),
  ]
}

async function measure(target: Target, options: MeasureOptions): Promise<Measured> {
  const instances = target.instances ?? [target]
  const shape = shapeOf(options)
  const clients = shape.socketsPerInstance * instances.length
  const preparedAt = performance.now()
  console.error(`bench: preparing ${clients} chat identities, their tokens and rooms`)
  const chat = await prepareChat(instances, clients, ROOMS_PER_CLIENT)
  console.error(`bench: connecting ${clients} clients from the load process, then sending`)
  const prepareSeconds = (performance.now() - preparedAt) / 1000
  const idle = await Promise.all(instances.map(memoryOf))
  let held: Memory[] = []
  let pids = instances.map((instance) => instance.pid)
  let before = sampleMachine(pids)
  const ticksOf = () => pids.map((pid) => (pid ? processTicks(pid) : 0))
  let ticksBefore: number[] = []
  let ticksAfter: number[] = []
  const plan: LoadPlan = {
    ...chat,
    instances: instances.map((instance) => instance.baseUrl),
    rate: shape.rate,
    seconds: shape.seconds,
    wave: shape.wave,
  }
  let after = before
  const result = await runLoad(plan, {
    async connected(loadPid) {
      held = await Promise.all(instances.map(memoryOf))
      pids = [...pids, loadPid]
      before = sampleMachine(pids)
      ticksBefore = ticksOf()
    },
    done() {
      after = sampleMachine(pids)
      ticksAfter = ticksOf()
    },
  })
  const { ledger, sends } = result
  const sockets = instances.map((_, i) => chat.clients.filter((client) => client.instance === i).length)
  const perSocket = Math.max(
    ...held.map((memory, i) => (memory.rss - (idle[i]?.rss ?? 0)) / (sockets[i] || 1)),
  )
  const steadyP99 = ledger.latency.steady?.fromResponse.p99Ms ?? Number.POSITIVE_INFINITY
  const waveP99 = ledger.latency.wave?.fromResponse.p99Ms ?? 0
  const droppedCount = Object.values(result.dropped).reduce((sum, n) => sum + n, 0)
  const failed =
    result.connect.connected !== clients ||
    (result.wave !== undefined && result.wave.connected !== result.wave.attempted) ||
    sends.failed > 0 ||
    ledger.missed > 0 ||
    ledger.duplicated > 0 ||
    ledger.toNonMembers > 0 ||
    droppedCount > 0
  const sizes = chat.rooms.map((room) => room.members.length)
  const drops = Object.entries(result.dropped)
  return {
    failed,
    passed:
      !failed &&
      steadyP99 < P99_TARGET_MS &&
      perSocket < BYTES_PER_SOCKET_TARGET &&
      waveP99 < WAVE_P99_TARGET_MS,
    lines: [
      `${instances.length} instances sharing PostgreSQL and Redis; ${clients} clients (WebSocket) from a load process ` +
        `of their own, ${chat.rooms.length} rooms of ${Math.min(...sizes)} to ${Math.max(...sizes)} members ` +
        `(${ROOMS_PER_CLIENT} rooms a client, ${(sizes.reduce((a, b) => a + b, 0) / sizes.length).toFixed(1)} members on average)`,
      `prepared through the admin and room APIs in ${prepareSeconds.toFixed(1)} s`,
      `${shape.rate} messages/s for ${shape.seconds} s over both instances` +
        (shape.wave > 0 ? `, then a wave of ${shape.wave} clients reconnecting to the other instance` : ''),
      '',
      connectLine('connect', result.connect),
      ...(result.wave ? [connectLine('reconnect wave', result.wave)] : []),
      formatTable(memoryRows(instances, idle, held, sockets)),
      `memory per socket: RSS growth over the sockets, after a garbage collection; target < ${kB(BYTES_PER_SOCKET_TARGET)}`,
      '',
      `sends: ${sends.sent} (${sends.failed} failed); answered (from the request to the 201) ${sendLines(sends.answered)}`,
      formatTable(latencyRows(ledger)),
      "latency from the send's 201 (0 when the event came first), and from its request",
      `targets (from the 201): steady p99 < ${P99_TARGET_MS} ms, the other clients' p99 during the wave < ${WAVE_P99_TARGET_MS} ms`,
      `deliveries expected ${ledger.expected}, delivered ${ledger.delivered}, missed ${ledger.missed}, ` +
        `duplicated ${ledger.duplicated}, to non-members ${ledger.toNonMembers}; ` +
        `to members reconnecting as it was sent ${ledger.unexpectedMembers}; before the send's answer ${ledger.beforeResponse}`,
      `clients disconnected, not by the load: ${droppedCount}${drops.length > 0 ? ` (${drops.map(([reason, n]) => `${reason} ${n}`).join(', ')})` : ''}; the load process's event-loop delay p99 ${ms(result.loopDelayP99Ms)}`,
      `from connected to the end: ${loadLine(before, after)}`,
      `of all cores' CPU time: ${pids
        .map((_, i) => {
          const share = processShare(before, after, [ticksBefore[i] ?? 0, ticksAfter[i] ?? 0])
          return `${i < instances.length ? `instance ${i + 1}` : 'the load process'} ${(100 * share).toFixed(0)} %`
        })
        .join(', ')}`,
    ],
  }
}

export const sockets: MeasuredScenario = {
  description: 'authenticated Socket.IO clients on two instances, message:new from messages posted over HTTP',
  requiresPostgres: true,
  instances: 2,
  serverEnv: {
    // The bench builds the environment from scratch: the instances share the machine's Redis.
    REDIS_URL: 'redis://127.0.0.1:6379',
    // Thousands of senders, some of them many times a minute: the per-user limit is lifted for the run.
    RATE_LIMIT_ROOMS_PER_MINUTE: '1000000000',
    NODE_OPTIONS: `--import=${PROBE_URL}`,
  },
  flags: {
    names: ['sockets-per-instance', 'rate', 'reconnect-wave'],
    usage:
      '--postgres [--sockets-per-instance N] [--rate MESSAGES/S] [--duration SECONDS] [--reconnect-wave N]',
    check: (values) => shapeOf({ flags: values, durationSeconds: 1, connections: 1, requests: undefined }),
  },
  measure,
}
