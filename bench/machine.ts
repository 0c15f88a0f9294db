import { execFileSync } from 'node:child_process'
import { readdirSync, readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg } from 'node:os'

/**
 * What the figures of a run depend on besides the code: the cores, the CPU, how busy the machine was
 * (load average, and where /proc/stat exists the share of CPU time that went to other work or to the
 * hypervisor), and whether the bench pinned its processes. Printed with every result.
 */

export const cores = availableParallelism()
// Quiet runs on the development machine left 0–3 % of the CPU time to other work; the runs that other
// sessions' tests shared, 18–52 %, differed from them by up to a fifth either way (bench/README.md).
const DISTURBED_SHARE = 0.1
const cpuModel = cpus()[0]?.model.trim() ?? 'unknown CPU'

/** The machine's load average (1, 5, 15 min): a busy machine gives less. */
export const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

/** CPU time counters of the whole machine (Linux /proc/stat, in clock ticks); undefined elsewhere. */
interface CpuTimes {
  busy: number
  steal: number
  total: number
}

function cpuTimes(): CpuTimes | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? ''
    // cpu user nice system idle iowait irq softirq steal guest guest_nice (guest is counted in user)
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number)
    const fields = [user, nice, system, idle, iowait, irq, softirq, steal].map((n) => n ?? 0)
    const total = fields.reduce((sum, n) => sum + n, 0)
    return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), steal: fields[7] ?? 0, total }
  } catch {
    return undefined
  }
}

/** User and system CPU ticks a process has used, all its threads (Linux /proc); 0 once it has gone. */
export function processTicks(pid: number): number {
  try {
    // Fields after the command, which is in parentheses and may hold spaces: utime and stime are 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return Number(fields[11]) + Number(fields[12])
  } catch {
    return 0
  }
}

/** The resident set of a process, from /proc (Linux), in bytes. */
export function residentBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? Number.NaN) * 1024
}

/** CPU ticks of each PostgreSQL process on the machine (other sessions' backends too), by pid. */
function postgresTicks(): Map<number, number> {
  const ticks = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === 'postgres') {
        ticks.set(Number(entry), processTicks(Number(entry)))
      }
    } catch {}
  }
  return ticks
}

/**
 * What PostgreSQL's processes used between two samples: those alive at the second, from the first (or from
 * their start). A backend that ended in between is not counted: its time falls under "other".
 */
function postgresBetween(before: Map<number, number>, after: Map<number, number>): number {
  let ticks = 0
  for (const [pid, used] of after) ticks += used - (before.get(pid) ?? 0)
  return ticks
}

/** A moment of the machine's state: load average, CPU counters, and the CPU the bench's processes used. */
export interface MachineSample {
  load: string
  times: CpuTimes | undefined
  /** Ticks of this process and `pids` (the server, the baseline); undefined when sampled without them. */
  own: number | undefined
  postgres: Map<number, number>
}

/**
 * The machine now. `pids` are the bench's children, alive both at this sample and at the one it is
 * compared with; without them, only how busy the machine was is reported, not by whom.
 */
export function sampleMachine(pids?: (number | undefined)[]): MachineSample {
  const times = cpuTimes()
  return {
    load: loadAverage(),
    times,
    own: pids && [process.pid, ...pids].reduce<number>((sum, pid) => sum + (pid ? processTicks(pid) : 0), 0),
    postgres: times ? postgresTicks() : new Map(),
  }
}

/** `2 cores (Intel Xeon), pinned: bench on CPU 0, servers on 1` */
export function machineLine(pinning: Pinning | undefined): string {
  const pinned = pinning
    ? `load generator pinned to CPU ${pinning.bench}, servers to CPU ${pinning.servers} (taskset)`
    : 'not pinned'
  return `machine: ${cores} cores (${cpuModel}), ${pinned}`
}

/**
 * How the CPUs' time went between two samples, as shares of all of it: busy, of which the bench's own
 * processes (itself, the server, the baseline), PostgreSQL (every backend on the machine) and other work
 * (other sessions: what makes two runs differ), and stolen by the hypervisor. Undefined without /proc/stat;
 * `own`, `postgres` and `other` only when both samples were taken with the bench's pids.
 */
export interface CpuShares {
  busy: number
  stolen: number
  own?: number
  postgres?: number
  other?: number
}

export function cpuShares(before: MachineSample, after: MachineSample): CpuShares | undefined {
  const { times: a } = before
  const { times: b } = after
  if (!a || !b) return undefined
  const total = Math.max(1, b.total - a.total)
  const busy = b.busy - a.busy
  const shares = { busy: busy / total, stolen: (b.steal - a.steal) / total }
  if (before.own === undefined || after.own === undefined) return shares
  const own = after.own - before.own
  const postgres = postgresBetween(before.postgres, after.postgres)
  const other = Math.max(0, busy - own - postgres)
  return { ...shares, own: own / total, postgres: postgres / total, other: other / total }
}

/** The share of all cores' CPU time between two samples that the process used, given its ticks at each. */
export function processShare(before: MachineSample, after: MachineSample, ticks: [number, number]): number {
  const total = (after.times?.total ?? 0) - (before.times?.total ?? 0)
  return total > 0 ? (ticks[1] - ticks[0]) / total : 0
}

/** Whether other work took enough of the CPU that the figures compare only with runs as busy. */
export const disturbed = (shares: CpuShares | undefined) => (shares?.other ?? 0) > DISTURBED_SHARE

const percent = (share: number) => `${(100 * share).toFixed(0)} %`

/** Load average before and after, and how the CPUs' time went in between (`cpuShares`). */
export function loadLine(before: MachineSample, after: MachineSample): string {
  const load = `load average (1, 5, 15 min) before ${before.load}, after ${after.load}`
  const shares = cpuShares(before, after)
  if (!shares) return load
  const stolen = `stolen ${percent(shares.stolen)}`
  if (shares.other === undefined) {
    return `${load}; CPU time of all ${cores} cores: busy ${percent(shares.busy)}, ${stolen}`
  }
  const line =
    `${load}; CPU time of all ${cores} cores: busy ${percent(shares.busy)} (the bench's processes ` +
    `${percent(shares.own ?? 0)}, PostgreSQL ${percent(shares.postgres ?? 0)}, other ${percent(shares.other)}), ${stolen}`
  return disturbed(shares)
    ? `${line}\nDISTURBED: other work took ${percent(shares.other)} of the CPU time: compare with runs as disturbed, not quiet ones`
    : line
}

/** Where the bench keeps its processes: the load generator on one CPU, the servers on the others. */
export interface Pinning {
  /** `taskset -c` list of the bench's own process (autocannon, the SQL replay). */
  bench: string
  /** `taskset -c` list of the server and the baseline. */
  servers: string
}

function hasTaskset(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' })
    return true
  } catch {
    return false
  }
}

/**
 * `--pin`: this process (every thread: autocannon, pg) on CPU 0, the servers on the others, so that the
 * load generator and the server never take turns on one core. On the 2-core development machine it did
 * not make runs closer (bench/README.md, "Run to run"), hence not the default. Undefined, and nothing
 * pinned, with one core or without `taskset` (not Linux).
 */
export function pinBench(): Pinning | undefined {
  if (cores < 2 || !hasTaskset()) return undefined
  const pinning = { bench: '0', servers: cores === 2 ? '1' : `1-${cores - 1}` }
  execFileSync('taskset', ['-a', '-p', '-c', pinning.bench, String(process.pid)], { stdio: 'ignore' })
  return pinning
}
