import { AsyncLocalStorage } from 'node:async_hooks'
import pg from 'pg'
import type { Logger } from '../log/logger.js'
import { createOutageLog } from '../log/outage-log.js'
import { dedicatedConnection } from './dedicated-connection.js'
import type { ConnectionSettings } from './waits.js'
import { holds, PAST_EVERY_POSITION, type WalPosition, walPosition } from './wal-positions.js'

/**
 * Streaming replicas serving reads (DATABASE_REPLICA_URLS; docs/decisions.md, "Reads on replicas"). Drizzle's
 * `withReplicas` sends every select to a replica and nothing else; what a service needs beyond it is here:
 * - the choice is the request's, not the statement's: a read request's statements go to one replica (or
 *   the primary), chosen when it starts; every other request, transaction and job stays on the primary;
 * - read your writes: a replica is chosen only if it has replayed the position of the caller's last write;
 * - lag and failure: a replica whose lag passes DATABASE_REPLICA_MAX_LAG_MS, or that does not answer, leaves
 *   the rotation, and comes back when it answers and has caught up; with none left, reads go to the primary;
 * - a statement a replica cannot serve (it went away, a conflict with recovery cancelled it, it writes) runs
 *   again on the primary, and so does the rest of its request: a replica that dies costs no request.
 */

/** How often each instance asks the primary for its WAL position and each replica for what it replayed. */
export const REPLICA_CHECK_INTERVAL_MS = 250

/**
 * DATABASE_REPLICA_MAX_LAG_MS by default: what a client reads of others' writes (a colleague's, a provider's
 * webhook) is at most 5 s old; its own writes it always reads (read your writes).
 */
export const REPLICA_MAX_LAG_DEFAULT_MS = 5000

export const REPLICA_STATES = ['in rotation', 'lagging', 'unreachable', 'not a replica'] as const
export type ReplicaState = (typeof REPLICA_STATES)[number]

export interface Replica {
  /** host:port/database, without credentials: how logs, readiness and metrics name it. */
  name: string
  state: ReplicaState
  /** How far behind the primary it was at its last check, in ms; undefined when it did not answer. */
  lagMs: number | undefined
  /** What it had replayed at its last check. */
  replayed: WalPosition | undefined
  /** Read requests it was chosen for (metrics). */
  reads: number
  pool: pg.Pool
}

/** What a read request runs with: the replica its statements go to, until one of them has to leave it. */
interface ReadRoute {
  replica: Replica | undefined
}

const readRoutes = new AsyncLocalStorage<ReadRoute>()

/**
 * SQLSTATEs after which a statement runs again on the primary: the replica is going or gone (08, 57P01-3,
 * 53300), its recovery cancelled the statement (40001, 40P01: a conflict with a vacuum or lock it replays),
 * or the statement writes (25006). Not a statement timeout (57014): the primary would take as long.
 */
const PRIMARY_SERVES_STATES = /^(08...|57P0[123]|53300|40001|40P01|25006)$/
/** Of those, the ones that say the replica itself cannot serve: it leaves the rotation until it answers again. */
const REPLICA_DOWN_STATES = /^(08...|57P0[123]|53300)$/

/** Whether a statement the replica failed runs again on the primary; errors without a SQLSTATE are the connection's. */
function primaryServesAfter(error: unknown): { again: boolean; replicaDown: boolean } {
  const code = (error as { code?: unknown }).code
  const sqlState = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined
  if (!sqlState) return { again: true, replicaDown: true }
  return { again: PRIMARY_SERVES_STATES.test(sqlState), replicaDown: REPLICA_DOWN_STATES.test(sqlState) }
}

type QueryArgs = [config: pg.QueryConfig | string, values?: unknown[]]

/**
 * The primary's pool, whose `query` runs a read request's statements on its replica. Transactions take a
 * client with `connect()`, which stays the primary's: Drizzle runs every transaction so.
 */
class ReadRoutingPool extends pg.Pool {
  onReplicaDown: (replica: Replica, error: unknown) => void = () => undefined

  // biome-ignore lint/suspicious/noExplicitAny: pg's overloads (callback forms among them) are passed on as they are.
  override query(...args: any[]): any {
    const route = readRoutes.getStore()
    const replica = route?.replica
    if (!replica || typeof args.at(-1) === 'function')
      return (super.query as (...a: unknown[]) => unknown)(...args)
    const [config, values] = args as QueryArgs
    return replica.pool.query(config, values).catch((error: unknown) => {
      const { again, replicaDown } = primaryServesAfter(error)
      if (!again) throw error
      if (route) route.replica = undefined
      if (replicaDown) this.onReplicaDown(replica, error)
      return super.query(config, values)
    })
  }
}

export interface ReplicaSetOptions {
  primaryUrl: string
  urls: string[]
  poolSize: number
  settings: ConnectionSettings
  maxLagMs: number
  log: Logger
  /** Pool errors (a lost idle connection) must be listened to; the primary's listener serves. */
  survivesLostConnections: (pool: pg.Pool, name: string) => void
}

export interface ReplicaSet {
  /** The pool the service's Drizzle database runs on: the primary's, routing read requests' statements. */
  pool: pg.Pool
  replicas: Replica[]
  /** A replica in rotation that holds `written` (the caller's last write), or undefined: the primary. */
  choose(written: WalPosition | undefined): Replica | undefined
  /** Runs a read request's work with its statements on `replica` (the primary when undefined). */
  readOn<T>(replica: Replica | undefined, work: () => T): T
  /** The primary's WAL position now, taken after a write committed: what a replica must replay to show it. */
  writePosition(): Promise<WalPosition>
  close(): Promise<void>
}

function nameOf(url: string): string {
  const parsed = new URL(url)
  return `${parsed.hostname}:${parsed.port || '5432'}${parsed.pathname}`
}

/** The primary's WAL position at each check, for as long as a lag may be measured against it. */
function primaryHistory(keepMs: number) {
  const samples: { at: number; position: WalPosition }[] = []
  return {
    add(at: number, position: WalPosition) {
      samples.push({ at, position })
      while (samples.length > 2 && (samples[0]?.at ?? at) < at - keepMs) samples.shift()
    },
    /**
     * How far behind a replica that replayed `replayed` is: since the first check that saw the primary past
     * it (0 when it holds the latest). One behind every check kept is behind by more than they span, which
     * just after a start is short: it counts as behind by all that is kept, past the bound.
     */
    lagOf(replayed: WalPosition, now: number): number {
      const latest = samples.at(-1)
      if (!latest || holds(replayed, latest.position)) return 0
      const firstAhead = samples.findIndex((sample) => !holds(replayed, sample.position))
      const since = now - (samples[firstAhead]?.at ?? now)
      return firstAhead === 0 ? Math.max(since, keepMs) : since
    },
  }
}

export function openReplicaSet(options: ReplicaSetOptions): ReplicaSet {
  const { settings, maxLagMs, log } = options
  const pool = new ReadRoutingPool({
    connectionString: options.primaryUrl,
    max: options.poolSize,
    keepAlive: true,
    ...settings,
  })
  // Each replica with what watches it: a connection of its own that asks what it replayed, and its outage log.
  const watched = options.urls.map((url) => {
    const replica: Replica = {
      name: nameOf(url),
      state: 'unreachable',
      lagMs: undefined,
      replayed: undefined,
      reads: 0,
      pool: new pg.Pool({ connectionString: url, max: options.poolSize, keepAlive: true, ...settings }),
    }
    options.survivesLostConnections(replica.pool, `PostgreSQL replica ${replica.name}`)
    const outage = createOutageLog(log, `PostgreSQL replica ${replica.name}`)
    return { replica, probe: dedicatedConnection(url, settings), outage }
  })
  const replicas = watched.map(({ replica }) => replica)
  const primaryProbe = dedicatedConnection(options.primaryUrl, settings)
  // Twice the bound and a few checks more.
  const history = primaryHistory(2 * maxLagMs + 4 * REPLICA_CHECK_INTERVAL_MS)

  const setState = (replica: Replica, state: ReplicaState, lagMs: number | undefined) => {
    if (state !== replica.state) log.info({ replica: replica.name, state, lagMs }, 'database replica state')
    replica.state = state
    replica.lagMs = lagMs
  }
  pool.onReplicaDown = (down, error) => {
    watched.find(({ replica }) => replica === down)?.outage.failed(error)
    setState(down, 'unreachable', undefined)
  }

  async function checkReplica({ replica, probe, outage }: (typeof watched)[number], now: number) {
    try {
      const [row] = (await probe.query('select pg_last_wal_replay_lsn()::text as lsn')) as {
        lsn: string | null
      }[]
      outage.recovered()
      if (!row?.lsn) return setState(replica, 'not a replica', undefined)
      replica.replayed = walPosition(row.lsn)
      const lagMs = history.lagOf(replica.replayed, now)
      setState(replica, lagMs <= maxLagMs ? 'in rotation' : 'lagging', lagMs)
    } catch (error) {
      outage.failed(error)
      setState(replica, 'unreachable', undefined)
    }
  }

  let checking: Promise<void> | undefined
  async function checkAll() {
    const now = Date.now()
    try {
      const [row] = (await primaryProbe.query('select pg_current_wal_lsn()::text as lsn')) as {
        lsn: string
      }[]
      if (row) history.add(now, walPosition(row.lsn))
    } catch {
      // The primary's own outage is told by its pool and readiness; lags are measured against what was seen.
    }
    await Promise.all(watched.map((each) => checkReplica(each, now)))
  }
  const check = () => {
    checking ??= checkAll().finally(() => {
      checking = undefined
    })
    return checking
  }
  const timer = setInterval(() => void check(), REPLICA_CHECK_INTERVAL_MS)
  timer.unref()
  void check()

  return {
    pool,
    replicas,
    choose(written) {
      const serving = replicas.filter(
        (r) => r.state === 'in rotation' && r.replayed !== undefined && holds(r.replayed, written),
      )
      const replica = serving[Math.floor(Math.random() * serving.length)]
      if (replica) replica.reads++
      return replica
    },
    readOn: (replica, work) => readRoutes.run({ replica }, work),
    async writePosition() {
      // The insert position, not the write position: a commit made with synchronous_commit off may not be
      // written yet, and it is in what a replica must replay. Never the replica's: outside any read route.
      const result = (await pool.query('select pg_current_wal_insert_lsn()::text as lsn')) as pg.QueryResult
      const lsn = (result.rows[0] as { lsn?: string } | undefined)?.lsn
      return lsn ? walPosition(lsn) : PAST_EVERY_POSITION
    },
    async close() {
      clearInterval(timer)
      await checking
      await Promise.all([primaryProbe.close(), ...watched.map(({ probe }) => probe.close())])
      await Promise.all([pool.end(), ...replicas.map((replica) => replica.pool.end())])
    },
  }
}

/** What readiness and metrics show of each replica. */
export type ReplicaStatus = Pick<Replica, 'name' | 'state' | 'lagMs' | 'reads'>

export function replicaStates(set: ReplicaSet): () => ReplicaStatus[] {
  return () => set.replicas.map(({ name, state, lagMs, reads }) => ({ name, state, lagMs, reads }))
}
