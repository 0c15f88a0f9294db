import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { parseArgs } from 'node:util'
import autocannon from 'autocannon'
import { benchCommand } from './children.js'
import { captureResponse } from './load.js'
import type { BenchRequest, ComparedScenario, Scenario } from './scenario.js'
import { scenarios } from './scenarios.js'
import {
  REPO_ROOT,
  type RunningServer,
  startBaseline,
  startOtlpSink,
  startServer,
  tracingEnv,
} from './servers.js'
import { prepareStart, readStartCommand } from './start-command.js'

/**
 * What one request costs in instructions, counted by valgrind's callgrind, for the real server and the bare
 * Fastify baseline answering the same bytes: `npx tsx bench/instructions.ts changelog [--tracing 0.1]`.
 * A count does not move with the machine's load, so it can tell a change of a few per cent that req/s ratios
 * (±0.15 between runs) cannot; it sees user space only (not the kernel's send), so it is read beside the
 * req/s bench, not instead of it. See bench/README.md.
 */

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    tracing: { type: 'string' },
    warm: { type: 'string', default: '40000' },
    requests: { type: 'string', default: '10000' },
    functions: { type: 'string', default: '0' },
  },
})
const name = positionals[0] ?? 'changelog'
const WARM = Number(values.warm)
const REQUESTS = Number(values.requests)
const FUNCTIONS = Number(values.functions)
/** How long each side is counted idle, to take what runs on timers (pollers, GC's idle work) out of a request's count. */
const IDLE_SECONDS = 15
/** Under callgrind a start takes about fifty times as long. */
const START_TIMEOUT_MS = 300_000
const CONNECTIONS = 10

interface Counted {
  side: string
  /** Instructions per request, all of them. */
  raw: number
  /** Instructions per second while idle. */
  idlePerSecond: number
  /** Per request, without the idle rate: the JIT compiler's, the garbage collector's and the rest ("steady"). */
  compiler: number
  gc: number
  steady: number
  functions: string[]
}

const COMPILER = /compiler::|Zone|maglev/
const GC = /Marking|Sweep|Scaveng|heap::|Heap|MemoryChunk|popcount/

/** A node that runs under callgrind, counting nothing until told to (`callgrind_control -i on`). */
async function callgrindNode(dir: string, side: string): Promise<string> {
  const script = join(dir, `${side}-node.sh`)
  const perfMap = FUNCTIONS > 0 ? '--perf-basic-prof-only-functions' : ''
  await writeFile(
    script,
    `#!/bin/sh\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=${dir}/${side}.%p ${process.execPath} ${perfMap} "$@"\n`,
    { mode: 0o755 },
  )
  return script
}

/** callgrind_control finds a process by the USER and HOST of its environment: the child's are given here. */
const control = (pid: number, args: string[], host: string | undefined) =>
  execFileSync('callgrind_control', [...args, String(pid)], {
    env: { PATH: process.env.PATH, ...(host && { HOST: host }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  })

const drive = (baseUrl: string, request: BenchRequest, amount: number) =>
  new Promise<void>((resolve, reject) => {
    autocannon(
      {
        url: new URL(request.path, baseUrl).toString(),
        method: request.method,
        headers: request.headers,
        body: request.body,
        connections: CONNECTIONS,
        amount,
      },
      (error, result) => {
        if (error) return reject(error)
        if (result.non2xx > 0 || result.errors > 0)
          return reject(new Error(`${result.non2xx} non-2xx answers and ${result.errors} errors`))
        resolve()
      },
    )
  })

/** callgrind_annotate's lines: instructions and the function they were spent in, self or inclusive. */
function annotated(file: string, inclusive: boolean): [number, string][] {
  const text = execFileSync(
    'callgrind_annotate',
    [`--inclusive=${inclusive ? 'yes' : 'no'}`, '--threshold=100', file],
    {
      maxBuffer: 256 * 1024 * 1024,
    },
  ).toString()
  return [...text.matchAll(/^\s*([\d,]+) \(\s*[\d.]+%\)\s+(.*)$/gm)]
    .map(([, count, fn]) => [Number((count as string).replaceAll(',', '')), fn as string] as [number, string])
    .filter(([, fn]) => !fn.includes('PROGRAM TOTALS'))
}

/** Names the JIT's code in a callgrind file from the perf map node wrote (`--perf-basic-prof-only-functions`). */
async function namedJitCode(file: string, pid: number): Promise<string> {
  const entries = (await readFile(`/tmp/perf-${pid}.map`, 'utf8').catch(() => ''))
    .split('\n')
    .map((line) => line.split(' '))
    .filter((parts) => parts.length >= 3)
    .map(([start, size, ...name]) => ({
      start: Number.parseInt(start as string, 16),
      size: Number.parseInt(size as string, 16),
      name: name.join('_'),
    }))
  // Code the collector freed leaves its address to later code: the map's last entry at an address is the one
  // that ran while counted (node writes an entry as it makes the code).
  const latest = [...new Map(entries.map((entry) => [entry.start, entry])).values()].sort(
    (a, b) => a.start - b.start,
  )
  const nameAt = (address: number) => {
    let low = 0
    let high = latest.length - 1
    while (low <= high) {
      const middle = (low + high) >> 1
      const entry = latest[middle] as (typeof latest)[number]
      if (address < entry.start) high = middle - 1
      else if (address >= entry.start + entry.size) low = middle + 1
      else return entry.name
    }
    return undefined
  }
  await rm(`/tmp/perf-${pid}.map`, { force: true })
  const named = `${file}.named`
  const text = await readFile(file, 'utf8')
  await writeFile(
    named,
    text.replace(/^(c?fn=\(\d+\)) 0x([0-9a-f]+)$/gm, (line, head: string, hex: string) => {
      const found = nameAt(Number.parseInt(hex, 16))
      return found ? `${head} ${found}` : line
    }),
  )
  return named
}

async function count(
  side: string,
  target: { baseUrl: string; pid: number | undefined },
  request: BenchRequest,
  dir: string,
  host: string | undefined,
): Promise<Counted> {
  const pid = target.pid as number
  await drive(target.baseUrl, request, WARM)
  control(pid, ['-i', 'on'], host)
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000))
  control(pid, ['-d'], host)
  const started = Date.now()
  await drive(target.baseUrl, request, REQUESTS)
  const seconds = (Date.now() - started) / 1000
  control(pid, ['-d'], host)
  control(pid, ['-i', 'off'], host)
  const dumps = (await readdir(dir)).filter((file) => file.startsWith(`${side}.${pid}.`)).sort()
  const [idleFile, busyFile] = dumps.map((file) => join(dir, file)) as [string, string]
  const total = (file: string) => annotated(file, false).reduce((sum, [n]) => sum + n, 0)
  const idlePerSecond = total(idleFile) / IDLE_SECONDS
  const lines = annotated(busyFile, false)
  const perRequest = (match: (fn: string) => boolean) =>
    lines.filter(([, fn]) => match(fn)).reduce((sum, [n]) => sum + n, 0) / REQUESTS
  const raw = perRequest(() => true)
  const compiler = perRequest((fn) => COMPILER.test(fn))
  const gc = perRequest((fn) => !COMPILER.test(fn) && GC.test(fn))
  const functions =
    FUNCTIONS > 0
      ? annotated(await namedJitCode(busyFile, pid), true)
          .filter(([, fn]) => fn.includes('JS:'))
          .slice(0, FUNCTIONS)
          .map(
            ([n, fn]) =>
              `${String(Math.round(n / REQUESTS)).padStart(8)}  ${fn.replace(/^\?\?\?:JS:/, '').replace(/ \[\?\?\?\]$/, '')}`,
          )
      : []
  return {
    side,
    raw,
    idlePerSecond,
    compiler,
    gc,
    steady: raw - compiler - gc - (idlePerSecond * seconds) / REQUESTS,
    functions,
  }
}

const thousands = (n: number) => `${(n / 1000).toFixed(1)}k`.padStart(8)

async function run(): Promise<boolean> {
  const found: Scenario | undefined = scenarios[name]
  if (!found || !('prepare' in found)) throw new Error(`${name} is not a scenario compared with a baseline`)
  const scenario: ComparedScenario = found
  const start = await readStartCommand(REPO_ROOT)
  await prepareStart(REPO_ROOT, start)
  const dir = await mkdtemp(join(tmpdir(), 'bench-instructions-'))
  const stops: (() => Promise<void>)[] = []
  try {
    let tracing: Record<string, string> = {}
    if (values.tracing !== undefined) {
      const sink = await startOtlpSink()
      stops.push(sink.stop)
      tracing = tracingEnv(sink.baseUrl, values.tracing)
    }
    const scenarioEnv =
      typeof scenario.serverEnv === 'function' ? await scenario.serverEnv() : scenario.serverEnv
    const server: RunningServer = await startServer({
      start,
      postgres: true,
      // The job workers' polls would count in every request: an API instance runs none.
      env: { ...scenarioEnv, ...tracing, RUN_WORKERS: 'false' },
      node: await callgrindNode(dir, 'server'),
      startTimeoutMs: START_TIMEOUT_MS,
    })
    stops.push(server.stop)
    const request = await scenario.prepare(server)
    const response = await captureResponse(server.baseUrl, request)
    const fastify = await startBaseline({ ...response, framework: 'fastify' }, undefined, {
      node: await callgrindNode(dir, 'fastify'),
      startTimeoutMs: START_TIMEOUT_MS,
    })
    stops.push(fastify.stop)
    const counted = [
      await count('server', server, request, dir, '127.0.0.1'),
      await count('fastify', fastify, request, dir, undefined),
    ]
    console.log(
      `${request.method} ${request.path}: instructions a request (${REQUESTS} after ${WARM} of warm-up)${values.tracing ? `, tracing at ${values.tracing}` : ''}`,
    )
    console.log('side          all   compiler        GC   idle/s    steady')
    for (const each of counted)
      console.log(
        `${each.side.padEnd(8)}${thousands(each.raw)}  ${thousands(each.compiler)}  ${thousands(each.gc)} ${thousands(each.idlePerSecond)} ${thousands(each.steady)}`,
      )
    const [ours, bare] = counted as [Counted, Counted]
    console.log(
      `steady server / Fastify: ${(ours.steady / bare.steady).toFixed(2)} (1.18 or less is what the light GET's 0.85 of req/s asks)`,
    )
    for (const each of counted.filter((side) => side.functions.length > 0))
      console.log(
        `\n${each.side}: JS functions, instructions a request with what they call\n${each.functions.join('\n')}`,
      )
    return true
  } finally {
    for (const stop of stops.reverse()) await stop()
    await rm(dir, { recursive: true, force: true })
  }
}

process.exitCode = await benchCommand('instructions', run)
