/**
 * `npx tsx bench/account-export-memory.ts [--scale 0.1 | --seeded URL]`: the server's memory while it exports the largest
 * account (its RSS stays within 256 MB of idle). Seeds a fresh PostgreSQL database with
 * seed:volume, starts the real server on it as `npm start` does, reads its idle RSS, then downloads the export
 * of the largest agency (with its sub-accounts) over HTTP, sampling the server's RSS every 100 ms.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { stopEverything } from './children.js'
import { residentBytes } from './machine.js'
import { createBenchDatabase } from './postgres.js'
import { RETENTION_OFF_FOR_SEEDED_ROWS, seedVolume } from './seed-volume.js'
import { REPO_ROOT, startServer } from './servers.js'
import { prepareStart, readStartCommand } from './start-command.js'

const SAMPLE_MS = 100
const MB = 1024 * 1024

/** Samples `pid`'s RSS until `work` settles; the highest sample and the work's result. */
async function peakWhile<T>(pid: number, work: Promise<T>): Promise<{ peak: number; result: T }> {
  let peak = residentBytes(pid)
  let done = false
  const settled = work.finally(() => {
    done = true
  })
  while (!done) {
    peak = Math.max(peak, residentBytes(pid))
    await Promise.race([delay(SAMPLE_MS), settled.catch(() => undefined)])
  }
  return { peak, result: await settled }
}

/** The export read as a client does, counting bytes and lines and keeping the last one. */
async function download(url: string, token: string) {
  const startedAt = performance.now()
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 200 || !response.body) throw new Error(`export answered ${response.status}`)
  let bytes = 0
  let lines = 0
  let tail = ''
  for await (const chunk of response.body) {
    const buffer = Buffer.from(chunk)
    bytes += buffer.length
    for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines++
    tail = (tail + buffer.toString('utf8')).slice(-65_536)
  }
  const end = JSON.parse(tail.trimEnd().split('\n').at(-1) ?? '').export_end
  return { bytes, lines, seconds: (performance.now() - startedAt) / 1000, end }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { scale: { type: 'string', default: '0.1' }, seeded: { type: 'string' } },
  })
  // --seeded URL: a database seed:volume already filled, kept afterwards (a large scale takes minutes).
  const database = values.seeded
    ? { url: values.seeded, drop: async () => undefined }
    : await createBenchDatabase()
  try {
    if (!values.seeded) {
      const scale = Number(values.scale)
      const seeded = await seedVolume(database.url, { scale })
      const total = Object.values(seeded.rows).reduce((sum, count) => sum + count, 0)
      console.log(`seeded ${total.toLocaleString('en')} rows at --scale ${scale} in ${seeded.seconds} s`)
    }
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    const { rows } = await client.query(`select id from accounts where name = 'Agency 0'`)
    await client.end()
    const accountId = rows[0].id as string

    const start = await readStartCommand(REPO_ROOT)
    await prepareStart(REPO_ROOT, start)
    const server = await startServer({
      start,
      postgres: false,
      env: { ...RETENTION_OFF_FOR_SEEDED_ROWS, DATABASE_URL: database.url },
    })
    const pid = server.pid as number
    await delay(3_000)
    const idle = residentBytes(pid)
    const { peak, result } = await peakWhile(
      pid,
      download(`${server.baseUrl}/v1/admin/accounts/${accountId}/export`, server.adminToken),
    )
    console.log(
      `exported ${result.end.rows.toLocaleString('en')} rows of ${Object.keys(result.end.rows_by_table).length} tables ` +
        `(${(result.bytes / MB).toFixed(0)} MB, ${result.lines.toLocaleString('en')} lines) in ${result.seconds.toFixed(1)} s`,
    )
    console.log(
      `server RSS: idle ${(idle / MB).toFixed(0)} MB, peak ${(peak / MB).toFixed(0)} MB while exporting, ` +
        `${((peak - idle) / MB).toFixed(0)} MB above idle (target: at most 256 MB)`,
    )
    await server.stop()
  } finally {
    await stopEverything()
    await database.drop()
  }
}

main().catch((error: Error) => {
  console.error(`error: ${error.message}`)
  process.exitCode = 1
})
